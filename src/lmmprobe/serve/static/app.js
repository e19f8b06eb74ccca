// lmmprobe serve: live runs, the image lightbox, small form helpers. No framework; every text
// from the store is set with textContent, never parsed as HTML.
"use strict";

(function () {
  const POLL_MS = 3000;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function shortSpec(spec) {
    // As lmmprobe.report's short_spec: no backend prefix, server or folders.
    const comma = spec.indexOf(",");
    let name = comma >= 0 ? spec.slice(0, comma) : spec;
    const options = comma >= 0 ? spec.slice(comma) : "";
    name = name.replace(/^[a-z][a-z0-9_+-]*:(?!\/\/)/, "");
    name = name.split("@")[0] || name;
    const parts = name.replace(/\/+$/, "").split("/");
    name = parts[parts.length - 1] || name;
    return name + options;
  }

  function two(n) { return String(n).padStart(2, "0"); }
  function when(ts) {
    const d = new Date(ts * 1000);
    return d.getFullYear() + "-" + two(d.getMonth() + 1) + "-" + two(d.getDate()) + " " +
      two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
  }
  function duration(s) {
    s = Math.max(0, Math.floor(s));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }
  function metric(m) {
    if (!m || typeof m.value !== "number" || !isFinite(m.value)) return "-";
    return m.value.toFixed(3);
  }

  function runRow(r, now) {
    const tr = el("tr");
    tr.dataset.run = r.id;
    tr.dataset.status = r.status;
    const id = el("td", "id");
    const a = el("a", null, r.id);
    a.href = r.url;
    id.appendChild(a);
    tr.appendChild(id);
    const st = el("td");
    st.appendChild(el("span", "badge st-" + r.status, r.status.replace(/_/g, " ")));
    tr.appendChild(st);
    const data = el("td", "data", r.data || "-");
    data.title = r.data || "";
    tr.appendChild(data);
    const models = el("td", "models");
    if (!r.models.length) models.textContent = "-";
    r.models.forEach(function (m) {
      const row = el("div", "mrow");
      const who = el("span");
      const name = el("span", "model", shortSpec(m));
      name.title = m;
      who.appendChild(name);
      if (r.setting && r.setting.length) {
        // What the run changed from a default run, as the server-rendered rows show it.
        who.appendChild(document.createTextNode(" "));
        const setting = el("span", "setting", "[" + r.setting.join(", ") + "]");
        setting.title = "what this run changed from a default run";
        who.appendChild(setting);
      }
      row.appendChild(who);
      row.appendChild(document.createTextNode(" "));
      row.appendChild(el("span", "acc", metric((r.metrics[m] || {}).accuracy)));
      models.appendChild(row);
    });
    tr.appendChild(models);
    const n = el("td", "num", r.n === null ? "-" : r.n);
    if (r.status === "running" && r.asked !== null) n.appendChild(el("div", "small", r.asked + " asked"));
    tr.appendChild(n);
    tr.appendChild(el("td", "when", when(r.created_at)));
    tr.appendChild(el("td", "num", duration((r.status === "running" ? now : r.updated_at) - r.created_at)));
    return tr;
  }

  function liveRuns() {
    const table = document.getElementById("runs-table");
    if (!table) return;
    const note = document.getElementById("live-note");
    async function tick() {
      try {
        const resp = await fetch(table.dataset.live, { credentials: "same-origin", cache: "no-store" });
        if (resp.ok) {
          const body = await resp.json();
          const tbody = el("tbody");
          body.runs.forEach(function (r) { tbody.appendChild(runRow(r, body.now)); });
          table.replaceChild(tbody, table.tBodies[0]);
          const running = body.runs.some(function (r) { return r.status === "running"; });
          if (note) note.hidden = !running;
          table.dataset.updated = String(body.now);
        }
      } catch (e) { /* the server restarting: try again next tick */ }
      setTimeout(tick, POLL_MS);
    }
    if (note) note.hidden = !table.querySelector('tr[data-status="running"]');
    setTimeout(tick, POLL_MS);
  }

  function liveRun() {
    const probe = document.getElementById("run-live");
    if (!probe) return;
    async function tick() {
      try {
        const resp = await fetch(probe.dataset.live, { credentials: "same-origin", cache: "no-store" });
        if (resp.ok) {
          const body = await resp.json();
          const asked = document.getElementById("asked");
          if (asked && body.run.asked !== null) asked.textContent = "(" + body.run.asked + " asked so far)";
          const counted = JSON.stringify(body.counts);
          if (body.run.status !== probe.dataset.status ||
              (probe.dataset.counts !== undefined && probe.dataset.counts !== counted)) {
            window.location.reload();
            return;
          }
          probe.dataset.counts = counted;
        }
      } catch (e) { /* try again */ }
      setTimeout(tick, POLL_MS);
    }
    setTimeout(tick, POLL_MS);
  }

  function lightbox() {
    // The image at its natural size in a scrolling overlay; "Fit to window" toggles shrinking
    // it to the window (a small image is never enlarged beyond its pixels).
    const box = document.getElementById("lightbox");
    if (!box) return;
    const big = box.querySelector(".lightbox-stage img");
    const fit = box.querySelector(".lb-fit");
    const open = box.querySelector(".lb-open");
    const size = box.querySelector(".lb-size");
    function setFit(on) {
      box.classList.toggle("fit", on);
      fit.textContent = on ? "Actual size (100%)" : "Fit to window";
      fit.setAttribute("aria-pressed", String(on));
    }
    big.addEventListener("load", function () {
      size.textContent = big.naturalWidth + " × " + big.naturalHeight + " px";
    });
    let opener = null;
    function close() {
      box.hidden = true;
      // Back to the thumbnail that opened it, so a keyboard user goes on where they were.
      if (opener && document.body.contains(opener)) opener.focus();
      opener = null;
    }
    document.addEventListener("click", function (ev) {
      // A picture, or a link holding one (a video frame: Enter on the focused link opens it).
      const link = ev.target.closest ? ev.target.closest("a.zoom") : null;
      const img = link ? link.querySelector("img.zoomable")
        : (ev.target.closest ? ev.target.closest("img.zoomable") : null);
      if (img) {
        const src = img.dataset.full || img.src;
        size.textContent = "";
        big.src = src;
        big.alt = img.alt;
        open.href = src;
        setFit(false);
        opener = link || img;
        box.hidden = false;
        box.querySelector(".lb-close").focus();
        ev.preventDefault();
        return;
      }
      if (box.hidden || !box.contains(ev.target)) return;
      if (ev.target === fit) setFit(!box.classList.contains("fit"));
      else if (ev.target === big || ev.target.closest(".lb-open, .lb-size")) return;
      else if (ev.target.closest(".lb-close") || !ev.target.closest(".lightbox-bar")) close();
    });
    document.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && !box.hidden) close();
    });
  }

  function frameStrips() {
    // A frame the server refuses (the video changed since the run, or cannot be read now) is
    // never shown as another picture: its thumbnail becomes a gap saying so, and the strip
    // names the frames, once per reason.
    const WHY = {
      changed: "Not the frames the model was given (the video file changed since the run), so not shown: ",
      unreadable: "The video cannot be read now (moved, deleted or damaged; the server's log says why), so these frames are not shown: "
    };
    document.querySelectorAll("figure.frame-strip").forEach(function (strip) {
      const note = strip.querySelector(".js-frame-problem");
      const total = strip.querySelectorAll("ol.strip > li").length;
      const failures = {};
      function tell(reason, pos, label) {
        if (!note) return;
        (failures[reason] = failures[reason] || []).push([pos, label]);
        note.textContent = Object.keys(failures).map(function (r) {
          const frames = failures[r].slice().sort(function (x, y) { return x[0] - y[0]; });
          if (r === "changed" && frames.length === total) {
            return "None of the " + total + " frames is the one the model was given (the video file changed since the run): they are not shown.";
          }
          return (WHY[r] || "Frames not shown: ") + frames.map(function (f) { return f[1]; }).join(", ") + ".";
        }).join(" ");
        note.hidden = false;
      }
      strip.querySelectorAll("img.frame-img").forEach(function (img) {
        const pos = Array.prototype.indexOf.call(strip.querySelectorAll("ol.strip > li"), img.closest("li"));
        function failed() {
          const label = img.dataset.label || "";
          const gap = document.createElement("span");
          gap.className = "frame-gap";
          gap.setAttribute("role", "img");
          gap.textContent = "not shown";
          gap.setAttribute("aria-label", img.alt + ": not shown");
          (img.closest("a") || img).replaceWith(gap);
          fetch(img.src, { headers: { Accept: "application/json" }, credentials: "same-origin" })
            .then(function (r) { return r.ok ? null : r.json(); })
            .then(function (body) {
              const reason = body && WHY[body.reason] ? body.reason : "other";
              gap.textContent = reason === "changed" ? "changed since the run" : "cannot be read now";
              gap.setAttribute("aria-label", img.alt + ": " + gap.textContent);
              tell(reason, pos, label);
            })
            .catch(function () { tell("other", pos, label); });
        }
        // An image that failed before this script ran has no error event left to fire.
        if (img.complete && img.naturalWidth === 0 && img.currentSrc) failed();
        else img.addEventListener("error", failed, { once: true });
      });
    });
  }

  function metaValues() {
    const key = document.getElementById("meta-key");
    const list = document.getElementById("meta-values");
    const data = document.getElementById("meta-keys-data");
    if (!key || !list || !data) return;
    const values = JSON.parse(data.textContent || "{}");
    key.addEventListener("change", function () {
      list.replaceChildren();
      (values[key.value] || []).forEach(function (v) {
        const opt = document.createElement("option");
        opt.value = v;
        list.appendChild(opt);
      });
      const value = document.getElementById("meta-value");
      if (value) value.value = "";
    });
  }

  function compareForm() {
    const form = document.getElementById("compare-form");
    if (!form) return;
    form.querySelectorAll("select.autosubmit").forEach(function (sel) {
      sel.addEventListener("change", function () {
        // The other run's models differ: let the server pick them again.
        const model = sel.closest("fieldset").querySelector("select:not(.autosubmit)");
        if (model) model.disabled = true;
        form.submit();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    liveRuns();
    liveRun();
    lightbox();
    frameStrips();
    metaValues();
    compareForm();
  });
})();
