(function () {
  "use strict";
  var body = document.body;
  var data = JSON.parse(document.getElementById("vt-data").textContent);
  var canvas = document.getElementById("wave");
  var mixed = document.getElementById("mixed");
  var style = getComputedStyle(document.documentElement);
  function color(name) { return style.getPropertyValue("--" + name).trim() || "#7a8699"; }
  var drawn = false;

  var GUTTER = 64, RIGHT = 14;
  var USER = { y: 12, h: 84 }, AGENT = { y: 104, h: 84 }, QUALITY = { y: 194, h: 24 }, MARKS = { y: 224, h: 30 }, AXIS = 262;

  function niceStep(seconds, px) {
    var steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600];
    for (var i = 0; i < steps.length; i++) {
      if (px * steps[i] / seconds >= 70) { return steps[i]; }
    }
    return steps[steps.length - 1];
  }
  function fmtTime(t, step) {
    if (t >= 60) {
      var m = Math.floor(t / 60), s = t - 60 * m;
      return m + ":" + (s < 10 ? "0" : "") + s.toFixed(step < 1 ? 1 : 0);
    }
    return t.toFixed(step < 1 ? 1 : 0) + "s";
  }

  function draw() {
    var w = Math.max(canvas.clientWidth, 300), h = 290;
    var dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    var g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    var dur = data.duration > 0 ? data.duration : 1;
    var plotW = w - GUTTER - RIGHT;
    function x(t) { return GUTTER + (t / dur) * plotW; }

    // Lanes.
    [[USER, "user", "User"], [AGENT, "agent", "Agent"], [QUALITY, "other", "Overlap"], [MARKS, "other", "Events"]].forEach(function (l) {
      g.fillStyle = "#f3f5f8";
      g.fillRect(GUTTER, l[0].y, plotW, l[0].h);
      g.fillStyle = l[1] === "other" ? "#667085" : color(l[1]);
      g.font = "600 12px system-ui, sans-serif";
      g.textBaseline = "middle";
      g.fillText(l[2], 8, l[0].y + l[0].h / 2);
    });

    // Time axis and grid.
    var step = niceStep(dur, plotW);
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "top";
    g.fillStyle = "#667085";
    g.strokeStyle = "#e4e7ec";
    g.lineWidth = 1;
    for (var t = 0; t <= dur + 1e-9; t += step) {
      var xt = Math.round(x(t)) + 0.5;
      g.beginPath(); g.moveTo(xt, USER.y); g.lineTo(xt, AXIS); g.stroke();
      var label = fmtTime(t, step);
      var lw = g.measureText(label).width;
      g.fillText(label, Math.min(Math.max(xt - lw / 2, GUTTER), w - RIGHT - lw), AXIS + 4);
    }

    // Speech spans.
    data.spans.forEach(function (s) {
      var lane = s.role === "user" ? USER : AGENT;
      var x0 = x(s.start), x1 = Math.max(x(s.end), x0 + 2);
      g.globalAlpha = 0.16;
      g.fillStyle = color(s.role === "user" ? "user" : "agent");
      g.fillRect(x0, lane.y, x1 - x0, lane.h);
      g.globalAlpha = 1;
      if (s.interrupted) {
        g.strokeStyle = color("interrupt");
        g.lineWidth = 1.5;
        g.strokeRect(x0 + 0.75, lane.y + 0.75, x1 - x0 - 1.5, lane.h - 1.5);
      }
    });

    // Waveforms from min/max peaks.
    function wave(peaks, lane, c) {
      var n = data.buckets, mid = lane.y + lane.h / 2, half = lane.h / 2 - 4;
      var bw = plotW / n;
      g.fillStyle = c;
      for (var i = 0; i < n; i++) {
        var lo = peaks[2 * i], hi = peaks[2 * i + 1];
        if (lo === 0 && hi === 0) { continue; }
        var y0 = mid - (hi / 127) * half, y1 = mid - (lo / 127) * half;
        g.fillRect(GUTTER + i * bw, y0, Math.max(bw, 1), Math.max(y1 - y0, 1));
      }
    }
    wave(data.user, USER, color("user"));
    wave(data.agent, AGENT, color("agent"));

    // Talk-over and pauses: solid in their own lane, and a tint across
    // both speakers' lanes, so the overlap shows on the waveforms too.
    // Every span first, then the labels, so no label hides a span.
    var spans = data.quality || [];
    spans.forEach(function (q) {
      var x0 = x(q.start), x1 = Math.max(x(q.end), x0 + 3);
      g.fillStyle = color(q.kind === "talk_over" ? "talkover" : q.kind === "unfilled" ? "unfilled" : "pause");
      g.globalAlpha = q.kind === "talk_over" ? 0.14 : 0.10;
      g.fillRect(x0, USER.y, x1 - x0, AGENT.y + AGENT.h - USER.y);
      g.globalAlpha = 1;
      g.fillRect(x0, QUALITY.y, x1 - x0, QUALITY.h);
    });
    var qlabelEnd = -1e9;
    g.font = "600 11px system-ui, sans-serif";
    g.textBaseline = "middle";
    g.fillStyle = "#1d2330";
    spans.slice().sort(function (a, b) { return a.start - b.start; }).forEach(function (q) {
      if (!q.label) { return; }
      var lx = Math.max(x(q.end), x(q.start) + 3) + 4, lw = g.measureText(q.label).width;
      var clear = spans.every(function (o) { return x(o.start) > lx + lw || Math.max(x(o.end), x(o.start) + 3) < lx; });
      if (clear && lx > qlabelEnd + 4 && lx + lw < w - 2) {
        g.fillText(q.label, lx, QUALITY.y + QUALITY.h / 2);
        qlabelEnd = lx + lw;
      }
    });
    // Where the plot lies on the page, for tools (and the report's test)
    // that check the picture.
    var r = canvas.getBoundingClientRect();
    body.setAttribute("data-plot", JSON.stringify({
      left: r.left + window.scrollX + GUTTER, width: plotW, duration: dur,
      quality: { top: r.top + window.scrollY + QUALITY.y, height: QUALITY.h }
    }));

    // Event marks, labelled where there is room.
    var lastEnd = -1e9;
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    data.marks.forEach(function (m) {
      var xm = Math.round(x(m.t)) + 0.5, c = color(m["class"]);
      g.strokeStyle = c;
      g.globalAlpha = 0.55;
      g.setLineDash([3, 3]);
      g.beginPath(); g.moveTo(xm, USER.y); g.lineTo(xm, MARKS.y + MARKS.h); g.stroke();
      g.setLineDash([]);
      g.globalAlpha = 1;
      g.fillStyle = c;
      g.beginPath();
      g.moveTo(xm, MARKS.y + 6); g.lineTo(xm - 5, MARKS.y + 14); g.lineTo(xm + 5, MARKS.y + 14); g.closePath(); g.fill();
      var lw = g.measureText(m.label).width;
      if (xm + 7 > lastEnd + 6 && xm + 7 + lw < w - 2) {
        g.fillText(m.label, xm + 7, MARKS.y + 22);
        lastEnd = xm + 7 + lw;
      }
    });

    // Playhead.
    if (mixed && mixed.currentTime > 0) {
      var xp = Math.round(x(mixed.currentTime)) + 0.5;
      g.strokeStyle = "#1d2330";
      g.lineWidth = 1.5;
      g.beginPath(); g.moveTo(xp, USER.y - 4); g.lineTo(xp, MARKS.y + MARKS.h); g.stroke();
    }
    drawn = true;
  }

  // Rendering is done once the waveform is drawn and every audio element
  // has loaded its metadata (or failed to): the counts are in data-*.
  var audios = Array.prototype.slice.call(document.querySelectorAll("audio"));
  var loaded = 0, failed = 0;
  function settle() {
    body.setAttribute("data-audio-loaded", String(loaded));
    body.setAttribute("data-audio-errors", String(failed));
    if (drawn && loaded + failed === audios.length) {
      body.setAttribute("data-rendered", "true");
    }
  }
  audios.forEach(function (a) {
    if (a.readyState >= 1) { loaded++; return; }
    a.addEventListener("loadedmetadata", function () { loaded++; settle(); }, { once: true });
    a.addEventListener("error", function () { failed++; settle(); }, { once: true });
  });

  canvas.addEventListener("click", function (e) {
    if (!mixed) { return; }
    var r = canvas.getBoundingClientRect();
    var t = ((e.clientX - r.left - GUTTER) / (r.width - GUTTER - RIGHT)) * data.duration;
    if (t >= 0 && isFinite(t)) { mixed.currentTime = Math.min(t, mixed.duration || t); }
  });
  if (mixed) {
    mixed.addEventListener("timeupdate", function () { window.requestAnimationFrame(draw); });
  }
  window.addEventListener("resize", function () { window.requestAnimationFrame(draw); });
  draw();
  settle();
})();
