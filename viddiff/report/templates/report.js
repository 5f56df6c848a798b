(function () {
  "use strict";
  var players = { a: document.getElementById("video-a"), b: document.getElementById("video-b") };

  function seek(video, value) {
    if (!video || value === undefined || value === "") return;
    var time = parseFloat(value);
    if (isNaN(time)) return;
    video.pause();
    if (video.readyState >= 1) {
      video.currentTime = time;
    } else {
      video.addEventListener("loadedmetadata", function () { video.currentTime = time; }, { once: true });
    }
  }

  document.querySelectorAll("button.seek").forEach(function (button) {
    button.addEventListener("click", function () {
      seek(players.a, button.dataset.seekA);
      seek(players.b, button.dataset.seekB);
      var panel = document.getElementById("players");
      if (panel) panel.scrollIntoView({ block: "start" });
    });
  });

  var box = document.getElementById("lightbox");
  if (box) {
    var big = box.querySelector("img");
    var caption = box.querySelector("p");
    document.querySelectorAll("button.zoom").forEach(function (button) {
      button.addEventListener("click", function () {
        var img = button.querySelector("img");
        big.src = img.src;
        big.alt = img.alt;
        caption.textContent = img.alt;
        box.showModal();
      });
    });
    box.addEventListener("click", function () { box.close(); });
  }

  // 3D skeletons (a difference measured from two calibrated views per side): both poses, turned by dragging.
  var SVG_NS = "http://www.w3.org/2000/svg";
  document.querySelectorAll("svg.skeleton3d").forEach(function (view) {
    var pose = JSON.parse(view.dataset.skeleton);
    var yaw = -0.6, pitch = 0.2;  // seen from the front left, a little from above
    var shapes = { a: [], b: [] };
    ["b", "a"].forEach(function (side) {  // A on top
      var group = document.createElementNS(SVG_NS, "g");
      group.setAttribute("class", "pose pose-" + side);
      pose.bones.forEach(function (bone) {
        var line = document.createElementNS(SVG_NS, "line");
        group.appendChild(line);
        shapes[side].push({ line: line, from: pose[side][bone[0]], to: pose[side][bone[1]] });
      });
      pose[side].forEach(function (point) {
        if (!point) return;
        var dot = document.createElementNS(SVG_NS, "circle");
        dot.setAttribute("r", (pose.radius / 60).toFixed(4));
        group.appendChild(dot);
        shapes[side].push({ dot: dot, at: point });
      });
      view.appendChild(group);
    });
    function project(p) {
      // turn about the vertical (yaw), then tilt (pitch); SVG y grows downwards
      var x = p[0] * Math.cos(yaw) + p[2] * Math.sin(yaw);
      var z = -p[0] * Math.sin(yaw) + p[2] * Math.cos(yaw);
      var y = p[1] * Math.cos(pitch) + z * Math.sin(pitch);
      return [x.toFixed(4), (-y).toFixed(4)];
    }
    function draw() {
      ["a", "b"].forEach(function (side) {
        shapes[side].forEach(function (shape) {
          if (shape.dot) {
            var at = project(shape.at);
            shape.dot.setAttribute("cx", at[0]);
            shape.dot.setAttribute("cy", at[1]);
          } else if (shape.from && shape.to) {
            var from = project(shape.from), to = project(shape.to);
            shape.line.setAttribute("x1", from[0]);
            shape.line.setAttribute("y1", from[1]);
            shape.line.setAttribute("x2", to[0]);
            shape.line.setAttribute("y2", to[1]);
          } else {
            shape.line.setAttribute("visibility", "hidden");  // a joint not triangulated
          }
        });
      });
      view.dataset.yaw = yaw.toFixed(3);
      view.dataset.pitch = pitch.toFixed(3);
    }
    function turn(dYaw, dPitch) {
      yaw += dYaw;
      pitch = Math.max(-1.4, Math.min(1.4, pitch + dPitch));
      draw();
    }
    var last = null;
    view.addEventListener("pointerdown", function (e) {
      last = [e.clientX, e.clientY];
      view.setPointerCapture(e.pointerId);
    });
    view.addEventListener("pointermove", function (e) {
      if (!last) return;
      turn((e.clientX - last[0]) * 0.01, (e.clientY - last[1]) * 0.01);
      last = [e.clientX, e.clientY];
    });
    view.addEventListener("pointerup", function () { last = null; });
    view.addEventListener("keydown", function (e) {
      var step = { ArrowLeft: [-0.2, 0], ArrowRight: [0.2, 0], ArrowUp: [0, -0.2], ArrowDown: [0, 0.2] }[e.key];
      if (step) { e.preventDefault(); turn(step[0], step[1]); }
    });
    draw();
  });

  var svg = document.querySelector("svg.timeline");
  if (svg) {
    var x0 = parseFloat(svg.dataset.x0);
    var perSecond = parseFloat(svg.dataset.unitsPerSecond);
    ["a", "b"].forEach(function (side) {
      var video = players[side];
      var head = document.getElementById("playhead-" + side);
      if (!video || !head) return;
      var offset = parseFloat(video.dataset.offset) || 0;
      var duration = parseFloat(video.dataset.duration) || 0;
      video.addEventListener("timeupdate", function () {
        var t = video.currentTime - offset;
        if (t < 0 || t > duration) { head.setAttribute("visibility", "hidden"); return; }
        var x = x0 + t * perSecond;
        head.setAttribute("x1", x);
        head.setAttribute("x2", x);
        head.setAttribute("visibility", "visible");
      });
    });
  }
})();
