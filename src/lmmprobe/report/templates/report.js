// lmmprobe report: draws the charts and the paginated sample browser from the embedded JSON.
// Every text from data or models is put in the page with textContent, never as markup.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("lmmprobe-data").textContent);

  // ---- charts
  var config = { displaylogo: false, responsive: true };
  Object.keys(DATA.figures).forEach(function (id) {
    var el = document.getElementById(id);
    if (!el || typeof Plotly === "undefined") { return; }
    var fig = DATA.figures[id];
    // The box reserves room before plotly draws (.chart's min-height); a figure of a set
    // height (a leaderboard of two models: 154 px) left the rest of it blank below the chart.
    if (fig.layout && typeof fig.layout.height === "number") { el.style.minHeight = fig.layout.height + "px"; }
    Plotly.newPlot(el, fig.data, fig.layout, config);
  });

  // ---- sample browser
  var B = DATA.browser;
  var root = document.getElementById("b-items");
  if (!root) { return; }
  var search = document.getElementById("b-search");
  var filter = document.getElementById("b-filter");
  var sizeSel = document.getElementById("b-size");
  var status = document.getElementById("b-status");
  var buttons = {
    first: document.getElementById("b-first"), prev: document.getElementById("b-prev"),
    next: document.getElementById("b-next"), last: document.getElementById("b-last")
  };
  var state = { page: 0, size: parseInt(sizeSel.value, 10) || 25, shown: B.items.map(function (_, i) { return i; }) };
  var F = {}; // answer field name -> position
  B.answer_fields.forEach(function (name, i) { F[name] = i; });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  var hay = [];
  function haystack(i) {
    if (hay[i] === undefined) {
      var it = B.items[i];
      var parts = [it.id, it.q || "", it.ctx || "", it.meta || "", it.gold || ""].concat(it.opts || []);
      it.ans.forEach(function (a) { parts.push(a[F.raw] || "", a[F.prediction] || "", a[F.error] || "", B.entries[a[F.entry]]); });
      hay[i] = parts.join("\n").toLowerCase();
    }
    return hay[i];
  }

  function keep(it) {
    var mode = filter.value;
    if (mode === "wrong") { return it.ans.some(function (a) { return a[F.correct] === 0; }); }
    if (mode === "problem") { return it.ans.some(function (a) { return a[F.stage] === "unparsed" || a[F.stage] === "truncated" || a[F.stage] === "error"; }); }
    if (mode === "disagree") {
      var seen = {};
      it.ans.forEach(function (a) { if (a[F.stage] !== "error") { seen["#" + a[F.prediction]] = true; } });
      return Object.keys(seen).length > 1;
    }
    return true;
  }

  function applyFilter() {
    var q = search.value.trim().toLowerCase();
    state.shown = [];
    for (var i = 0; i < B.items.length; i++) {
      if (keep(B.items[i]) && (!q || haystack(i).indexOf(q) !== -1)) { state.shown.push(i); }
    }
    state.page = 0;
    render();
  }

  function isImageUri(uri) {
    // Only our own data URIs of images are ever used as a source.
    return typeof uri === "string" && uri.indexOf("data:image/") === 0;
  }

  // ---- lightbox: a click on a thumbnail opens the embedded large picture
  var box = document.getElementById("lightbox");
  var boxCap = document.getElementById("lightbox-cap");
  var boxImg = null;
  function openBox(index, caption) {
    var full = (B.full || [])[index];
    var large = isImageUri(full);
    // Made on opening and dropped on closing: the page never holds an image without a source.
    boxImg = el("img");
    boxImg.id = "lightbox-img";
    boxImg.alt = "sample image, large";
    boxImg.src = large ? full : B.thumbs[index];
    document.getElementById("lightbox-fig").insertBefore(boxImg, boxCap);
    boxImg.className = large ? "" : "upscaled";
    // A video frame names its clip and time (one picture may be several frames' thumbnail).
    var file = caption || (B.files || [])[index];
    boxCap.textContent = (file ? file + " · " : "") + (large
      ? "click or press Escape to close"
      : "only the thumbnail is embedded (the report's size budget for large pictures is spent); click or press Escape to close");
    box.hidden = false;
  }
  function closeBox() {
    box.hidden = true;
    if (boxImg) { boxImg.remove(); boxImg = null; }
  }
  if (box) {
    box.addEventListener("click", closeBox);
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape" && !box.hidden) { closeBox(); } });
  }

  function thumb(index) {
    var uri = B.thumbs[index];
    if (!isImageUri(uri)) { return null; }
    var img = el("img");
    img.src = uri;
    img.alt = "sample image (click to enlarge)";
    img.title = "click to enlarge";
    img.tabIndex = 0;
    img.addEventListener("click", function () { openBox(index); });
    img.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { openBox(index); } });
    return img;
  }

  // A strip of the video frames a model was given, in time order, each with its time (of many,
  // an evenly spaced few, the caption saying so); a frame that cannot be shown (the video moved
  // or changed since the run, or the report's decoding limit was reached) is a named gap,
  // never another picture.
  var GAPS = { changed: "changed since the run", budget: "not decoded (the report's limit)" };
  function strip(s) {
    var n = s.frames.length;
    var total = s.total || n;
    var fig = el("figure", "frames");
    var cap = el("figcaption", "frames-cap");
    cap.appendChild(el("b", null, "Video frames the model was given"));
    var count = total + " frame" + (total === 1 ? "" : "s") + (n < total ? " (" + n + " shown, evenly spaced)" : "");
    cap.appendChild(el("span", null, " · " + s.policy + " · " + count + " · " + s.name));
    fig.appendChild(cap);
    (s.problems || []).forEach(function (t) { fig.appendChild(el("p", "frame-problem", t)); });
    var ol = el("ol", "strip");
    ol.setAttribute("aria-label", "frames in time order (" + s.policy + ")");
    s.frames.forEach(function (f, k) {
      var li = el("li");
      var uri = f[0] === null ? null : B.thumbs[f[0]];
      if (isImageUri(uri)) {
        var b = el("button", "frame");
        b.type = "button";
        b.title = "frame " + (k + 1) + " of " + n + " at " + f[1] + " (click to enlarge)";
        var img = el("img");
        img.loading = "lazy";
        img.src = uri;
        img.alt = "frame " + (k + 1) + " of " + n + " at " + f[1] + ", enlarge";
        b.appendChild(img);
        b.addEventListener("click", function () { openBox(f[0], s.name + " · " + f[1]); });
        li.appendChild(b);
      } else {
        var gap = el("div", "frame-gap", GAPS[f[2]] || "cannot be shown");
        gap.setAttribute("role", "img");
        gap.setAttribute("aria-label", "frame " + (k + 1) + " of " + n + " at " + f[1] + ": " + gap.textContent);
        li.appendChild(gap);
      }
      li.appendChild(el("span", "t", f[1]));
      ol.appendChild(li);
    });
    fig.appendChild(ol);
    return fig;
  }

  function card(it) {
    var art = el("article", "sample");
    art.dataset.sampleId = it.id;
    if (it.img.length) {
      var thumbs = el("div", "thumbs");
      it.img.forEach(function (k) { var t = thumb(k); if (t) { thumbs.appendChild(t); } });
      art.appendChild(thumbs);
    }
    var body = el("div", "body");
    body.appendChild(el("div", "sid", it.id + (it.meta ? " · " + it.meta : "") + (B.data.length > 1 ? " · " + B.data[it.data] : "")));
    (it.video || []).forEach(function (s) { body.appendChild(strip(s)); });
    if (it.ctx) { body.appendChild(el("p", "ctx", it.ctx)); }
    body.appendChild(el("p", "q", it.q));
    if (it.opts) {
      var ol = el("ol", "opts");
      ol.type = "A";
      it.opts.forEach(function (o, i) { ol.appendChild(el("li", i === it.goldi ? "gold" : "", o)); });
      body.appendChild(ol);
    } else {
      var g = el("div");
      g.appendChild(el("span", null, "reference: "));
      g.appendChild(el("span", "gold-text", it.gold));
      body.appendChild(g);
    }
    var table = el("table", "answers");
    var head = el("tr");
    ["model", "raw answer", "stage", "prediction", "verdict / score"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    it.ans.forEach(function (a) {
      var tr = el("tr");
      var name = B.entries[a[F.entry]] + (a[F.repeat] ? " #" + a[F.repeat] : "");
      tr.appendChild(el("td", null, name));
      var raw = el("td", "raw");
      var think = F.thinking === undefined ? null : a[F.thinking];
      if (a[F.error]) { raw.appendChild(el("span", "errtext", a[F.error])); }
      else if (think !== null && think !== undefined) {
        // A reasoning output: the answer as read, the thinking and the raw text collapsed.
        raw.appendChild(el("div", "answer-read", a[F.answer] ? a[F.answer] : "(none: cut off before its answer)"));
        [["thinking (" + think.length + " characters, never read)", think], ["raw output", a[F.raw] === null ? "" : a[F.raw]]].forEach(function (part) {
          var d = el("details", "thinking");
          d.appendChild(el("summary", null, part[0]));
          d.appendChild(el("div", "think-text", part[1]));
          raw.appendChild(d);
        });
      }
      else { raw.textContent = a[F.raw] === null ? "" : a[F.raw]; }
      tr.appendChild(raw);
      var st = el("td");
      st.appendChild(el("span", "stage " + String(a[F.stage]).replace(/[^a-z]/g, ""), a[F.stage]));
      tr.appendChild(st);
      tr.appendChild(el("td", null, a[F.prediction]));
      var c = a[F.correct];
      var sc = F.score === undefined ? null : a[F.score];
      if (a[F.stage] === "empty") {
        // Named as serve's sample page names it: a blank cell, or a bare 0.0, read as a
        // missing figure or as an answer scored.
        var empty = el("td", "empty-answer", "(empty answer)");
        empty.title = "a caption or free-form description with no text: no verdict; the free-form score counts it 0";
        tr.appendChild(empty);
      } else if (sc !== null && sc !== undefined) {
        var td = el("td", "score", Number(sc).toFixed(1));
        td.title = "free-form score: embedding similarity × 100";
        tr.appendChild(td);
      } else {
        tr.appendChild(el("td", c === 1 ? "ok" : c === 0 ? "bad" : "", c === 1 ? "✓" : c === 0 ? "✗" : ""));
      }
      table.appendChild(tr);
    });
    body.appendChild(table);
    art.appendChild(body);
    return art;
  }

  function pages() { return Math.max(1, Math.ceil(state.shown.length / state.size)); }

  function render() {
    var n = pages();
    state.page = Math.min(Math.max(state.page, 0), n - 1);
    var start = state.page * state.size;
    var frag = document.createDocumentFragment();
    state.shown.slice(start, start + state.size).forEach(function (i) { frag.appendChild(card(B.items[i])); });
    root.replaceChildren(frag);
    status.textContent = state.shown.length
      ? "page " + (state.page + 1) + " of " + n + " · " + state.shown.length + " of " + B.items.length + " samples"
      : "no sample matches";
    buttons.first.disabled = buttons.prev.disabled = state.page === 0;
    buttons.next.disabled = buttons.last.disabled = state.page >= n - 1;
  }

  function go(page) { state.page = page; render(); }
  buttons.first.addEventListener("click", function () { go(0); });
  buttons.prev.addEventListener("click", function () { go(state.page - 1); });
  buttons.next.addEventListener("click", function () { go(state.page + 1); });
  buttons.last.addEventListener("click", function () { go(pages() - 1); });
  sizeSel.addEventListener("change", function () { state.size = parseInt(sizeSel.value, 10) || 25; go(0); });
  filter.addEventListener("change", applyFilter);
  var timer = null;
  search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(applyFilter, 150); });
  render();
})();
