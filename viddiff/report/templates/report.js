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
