// Live arena leaderboard: polls /arena/api/leaderboard and rebuilds the table with text only
// (model names come from users and models: never parsed as HTML).
(function () {
  "use strict";
  var PERIOD_MS = 2000;
  var table = document.getElementById("board");
  if (!table) { return; }
  var body = table.tBodies[0];
  var api = table.getAttribute("data-api") || "/arena/api/leaderboard";  // the page's runs
  var status = document.getElementById("board-status");
  var votes = document.getElementById("board-votes");
  var raters = document.getElementById("board-raters");
  var ties = document.getElementById("board-ties");
  var bothBad = document.getElementById("board-bothbad");
  var updating = document.getElementById("board-updating");
  function fmt(x, digits) { return x === null || x === undefined ? "-" : x.toFixed(digits); }
  function cell(row, text) { var td = document.createElement("td"); td.textContent = text; row.appendChild(td); }
  function render(board) {
    var rows = document.createDocumentFragment();
    board.models.forEach(function (m, i) {
      var tr = document.createElement("tr");
      cell(tr, String(i + 1));
      cell(tr, m.model);
      cell(tr, fmt(m.elo, 1));
      cell(tr, String(m.elo_hemm_int));
      cell(tr, fmt(m.hemm_win_rate, 3));
      cell(tr, fmt(m.win_rate_over_opponents_met, 3));
      cell(tr, String(m.battles));
      cell(tr, m.wins + " / " + m.losses + " / " + m.ties);
      rows.appendChild(tr);
    });
    if (board.models.length) {
      body.replaceChildren(rows);
    }
    votes.textContent = String(board.votes);
    raters.textContent = String(board.raters);
    ties.textContent = String(board.vote_counts.tie);
    bothBad.textContent = String(board.vote_counts.both_bad);
    status.setAttribute("data-votes", String(board.votes));
    var newer = board.votes_stored - board.votes;
    updating.textContent = board.updating && newer > 0 ? " (recomputing with " + newer + " newer vote(s)…)" : "";
  }
  function poll() {
    fetch(api, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.json(); })
      .then(render)
      .catch(function () { /* the server may be restarting: try again next period */ })
      .then(function () { window.setTimeout(poll, PERIOD_MS); });
  }
  window.setTimeout(poll, PERIOD_MS);
})();
