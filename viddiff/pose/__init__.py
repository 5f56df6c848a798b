"""Body-pose evidence: keypoints per frame, kinematics, and a measurement per difference (docs/pose.md).

- :mod:`~viddiff.pose.estimators`: the estimator protocol and the table behind ``pose.estimator``
  (:mod:`~viddiff.pose.blazepose`, :mod:`~viddiff.pose.rtmpose`);
- :mod:`~viddiff.pose.track`: a video's keypoints over time, cached by content;
- :mod:`~viddiff.pose.kinematics`: angles, lean, normalised widths and heights, speeds, with gaps and their reasons;
- :mod:`~viddiff.pose.align`: stage-normalised time from a segmentation, and DTW;
- :mod:`~viddiff.pose.sampling`, :mod:`~viddiff.pose.statistics`: the rate the pose is estimated at, and one
  statistic over real time with its support and its series-borne uncertainty;
- :mod:`~viddiff.pose.vocabulary`, :mod:`~viddiff.pose.mapping`, :mod:`~viddiff.pose.measure`: the closed vocabulary,
  the call mapping differences onto it, and the measured evidence with its verdict;
- :mod:`~viddiff.pose.export`, :mod:`~viddiff.pose.drawing`: CSV files and skeleton overlays.

Like every stage, this wing imports no other stage: it takes the localizer's :class:`~viddiff.schema.Segmentation`
(schema) and the frames (:mod:`viddiff.video`) as input; methods compose it with the others.
"""
