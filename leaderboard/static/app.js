// PostTrain Arena leaderboard: sorting and filtering on top of the server-rendered table (which works without this
// script, in rank order). The view lives in the URL (?sort=&dir=&q=&domain=&verdict=) so it can be shared; rows of
// later pages are fetched from the same site only when a sort or filter needs them.
(function () {
  "use strict";

  var table = document.getElementById("board");
  var form = document.getElementById("controls");
  if (!table || !form) return;

  var body = table.tBodies[0];
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var columns = {};
  headers.forEach(function (th, index) {
    if (th.dataset.key) columns[th.dataset.key] = { index: index, type: th.dataset.type, th: th };
  });
  var pageUrls = JSON.parse(table.dataset.pageUrls || "[]");
  var root = table.dataset.root || "";
  var allLoaded = pageUrls.length <= 1;
  var loading = null;
  var shown = document.getElementById("shown");
  var FIELDS = ["q", "domain", "verdict"];
  var DEFAULT = { sort: "rank", dir: "asc" };

  function readState() {
    var params = new URLSearchParams(window.location.search);
    var state = { sort: params.get("sort") || DEFAULT.sort, dir: params.get("dir") === "desc" ? "desc" : "asc" };
    if (!columns[state.sort]) state = { sort: DEFAULT.sort, dir: DEFAULT.dir };
    FIELDS.forEach(function (name) { state[name] = params.get(name) || ""; });
    return state;
  }

  function writeState(state) {
    var params = new URLSearchParams();
    if (state.sort !== DEFAULT.sort || state.dir !== DEFAULT.dir) {
      params.set("sort", state.sort);
      params.set("dir", state.dir);
    }
    FIELDS.forEach(function (name) { if (state[name]) params.set(name, state[name]); });
    var query = params.toString();
    window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
  }

  function isDefault(state) {
    return state.sort === DEFAULT.sort && state.dir === DEFAULT.dir && !state.q && !state.domain && !state.verdict;
  }

  function sortValue(row, column) {
    var raw = row.cells[column.index].dataset.sort;
    if (raw === undefined || raw === "") return null;
    return column.type === "num" ? parseFloat(raw) : raw.toLowerCase();
  }

  function compare(column, dir) {
    var sign = dir === "desc" ? -1 : 1;
    return function (a, b) {
      var x = sortValue(a, column), y = sortValue(b, column);
      if (x === null || y === null) {
        if (x !== y) return x === null ? 1 : -1;  // rows without a value go last either way
      } else if (x !== y) {
        return (x < y ? -1 : 1) * sign;
      }
      return Number(a.dataset.position) - Number(b.dataset.position);
    };
  }

  function matches(row, state) {
    if (state.domain && row.dataset.domain !== state.domain) return false;
    if (state.verdict && row.dataset.verdict !== state.verdict) return false;
    if (state.q && row.dataset.search.indexOf(state.q.toLowerCase().trim()) === -1) return false;
    return true;
  }

  function render(state) {
    var rows = Array.prototype.slice.call(body.rows);
    var column = columns[state.sort];
    rows.sort(compare(column, state.dir));
    var fragment = document.createDocumentFragment();
    var count = 0;
    rows.forEach(function (row) {
      var visible = matches(row, state);
      row.hidden = !visible;
      if (visible) count += 1;
      fragment.appendChild(row);
    });
    body.appendChild(fragment);
    headers.forEach(function (th) {
      if (!th.dataset.key) return;
      if (th.dataset.key === state.sort) th.setAttribute("aria-sort", state.dir === "desc" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
    shown.textContent = count === rows.length ? count + " environments" : count + " of " + rows.length + " shown";
  }

  function absolutise(row, base) {
    Array.prototype.forEach.call(row.querySelectorAll("a[href]"), function (a) {
      a.setAttribute("href", new URL(a.getAttribute("href"), base).href);
    });
    return row;
  }

  function loadAll() {
    if (allLoaded) return Promise.resolve();
    if (loading) return loading;
    shown.textContent = "Loading every row…";
    var here = window.location.href;
    var current = new URL(here);
    loading = Promise.all(pageUrls.map(function (url) {
      var target = new URL(root + url, here);
      if (target.pathname === current.pathname || target.pathname + "index.html" === current.pathname) {
        return Promise.resolve([]);
      }
      return fetch(target.href, { credentials: "same-origin" }).then(function (response) {
        if (!response.ok) throw new Error(target.href + ": " + response.status);
        return response.text();
      }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var other = doc.getElementById("board");
        return other ? Array.prototype.map.call(other.tBodies[0].rows, function (row) {
          return absolutise(document.importNode(row, true), target.href);
        }) : [];
      });
    })).then(function (pages) {
      pages.forEach(function (rows) { rows.forEach(function (row) { body.appendChild(row); }); });
      allLoaded = true;
      var pager = document.querySelector(".pager");
      if (pager) pager.hidden = true;
    });
    return loading;
  }

  function apply(state, remember) {
    if (remember) writeState(state);
    if (isDefault(state) || allLoaded) {
      render(state);
      return;
    }
    loadAll().then(function () { render(state); }, function () {
      shown.textContent = "Could not load the other pages; sorting and filtering this page only.";
      allLoaded = true;
      render(state);
    });
  }

  function formState() {
    var state = readState();
    FIELDS.forEach(function (name) { state[name] = form.elements[name].value; });
    return state;
  }

  headers.forEach(function (th) {
    if (!th.dataset.key) return;
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) button.appendChild(th.firstChild);
    var arrow = document.createElement("span");
    arrow.className = "arrow";
    arrow.setAttribute("aria-hidden", "true");
    button.appendChild(arrow);
    th.appendChild(button);
    button.addEventListener("click", function () {
      var state = formState();
      var first = th.dataset.type === "num" && th.dataset.key !== "rank" ? "desc" : "asc";
      state.dir = state.sort === th.dataset.key ? (state.dir === "asc" ? "desc" : "asc") : first;
      state.sort = th.dataset.key;
      apply(state, true);
    });
  });

  form.addEventListener("input", function () { apply(formState(), true); });
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function () {
    window.setTimeout(function () { apply({ sort: DEFAULT.sort, dir: DEFAULT.dir, q: "", domain: "", verdict: "" }, true); }, 0);
  });

  var initial = readState();
  FIELDS.forEach(function (name) {
    var field = form.elements[name];
    if (field.tagName === "SELECT" && initial[name] && !field.querySelector("option[value='" + CSS.escape(initial[name]) + "']")) {
      initial[name] = "";
    }
    field.value = initial[name];
  });
  form.hidden = false;
  apply(initial, false);
})();
