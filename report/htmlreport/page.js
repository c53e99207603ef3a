"use strict";
(function () {
  // Table: filter and sort. Rows hold their numbers in data attributes.
  // The rows are cut into tables of equal length (chunks); sorting
  // refills them in the new order.
  var bodies = Array.prototype.slice.call(document.querySelectorAll(".rows .chunk tbody"));
  var tools = document.querySelectorAll(".tools");
  for (var i = 0; i < tools.length; i++) tools[i].hidden = false;
  var per = bodies.length ? bodies[0].rows.length : 0;
  var rows = [];
  bodies.forEach(function (b) { rows.push.apply(rows, Array.prototype.slice.call(b.rows)); });
  var count = document.getElementById("count");
  function num(r, a) { var v = r.getAttribute(a); return v === "" || v === null ? NaN : Number(v); }
  var keys = {
    est: function (r) { return -num(r, "data-est"); },
    width: function (r) { return -(num(r, "data-hi") - num(r, "data-lo")); },
    delta: function (r) { return -Math.abs(num(r, "data-delta")); },
    growth: function (r) { return -num(r, "data-delta"); },
    ratio: function (r) { var v = num(r, "data-ratio-lo"); return isNaN(v) ? Infinity : -v; },
    key: null
  };
  function sortBy(name) {
    var f = keys[name], s = rows.slice();
    if (f) {
      var k = new Map();
      s.forEach(function (r) { k.set(r, f(r)); });
      s.sort(function (a, b) { return (k.get(a) - k.get(b)) || (a.dataset.key < b.dataset.key ? -1 : 1); });
    } else {
      s.sort(function (a, b) { return a.dataset.key < b.dataset.key ? -1 : a.dataset.key > b.dataset.key ? 1 : 0; });
    }
    bodies.forEach(function (b, i) {
      var frag = document.createDocumentFragment();
      s.slice(i * per, (i + 1) * per).forEach(function (r) { frag.appendChild(r); });
      b.appendChild(frag);
    });
    var bs = document.querySelectorAll(".sort button");
    for (var i = 0; i < bs.length; i++) bs[i].classList.toggle("on", bs[i].dataset.sort === name);
  }
  var bs = document.querySelectorAll(".sort button");
  for (var j = 0; j < bs.length; j++) {
    bs[j].addEventListener("click", function (e) { sortBy(e.currentTarget.dataset.sort); });
  }
  var filter = document.getElementById("filter");
  function applyFilter() {
    var q = filter.value.toLowerCase(), n = 0;
    rows.forEach(function (r) {
      var hide = q !== "" && r.dataset.key.toLowerCase().indexOf(q) < 0;
      if (r.hidden !== hide) r.hidden = hide;
      if (!hide) n++;
    });
    if (count) count.textContent = n + " of " + rows.length + " rows";
  }
  if (filter) { filter.addEventListener("input", applyFilter); applyFilter(); }

  // Flame graph: click to zoom, search.
  var fg = document.getElementById("fg");
  if (!fg) return;
  var frames = Array.prototype.slice.call(fg.querySelectorAll("svg.fr"));
  var geo = frames.map(function (f) {
    return { el: f, x: parseFloat(f.getAttribute("x")), w: parseFloat(f.getAttribute("width")), d: Number(f.dataset.depth) };
  });
  function zoom(z) {
    var x0 = z.x, w0 = z.w, eps = 1e-9;
    geo.forEach(function (g) {
      var inside = g.x >= x0 - eps && g.x + g.w <= x0 + w0 + 1e-6;
      var above = g.d < z.d && g.x <= x0 + eps && g.x + g.w >= x0 + w0 - 1e-6;
      g.el.classList.toggle("out", !(inside || above));
      g.el.classList.toggle("up", above);
      if (above) {
        g.el.setAttribute("x", "0%"); g.el.setAttribute("width", "100%");
      } else if (inside) {
        g.el.setAttribute("x", (100 * (g.x - x0) / w0) + "%");
        g.el.setAttribute("width", (100 * g.w / w0) + "%");
      }
    });
    fg.dataset.zoom = z.el.dataset.frame;
  }
  geo.forEach(function (g) {
    g.el.addEventListener("click", function () { zoom(g); });
  });
  var search = document.getElementById("search"), found = document.getElementById("found");
  if (search) {
    search.addEventListener("input", function () {
      var q = search.value.toLowerCase(), n = 0;
      geo.forEach(function (g) {
        var hit = q !== "" && g.el.dataset.frame.toLowerCase().indexOf(q) >= 0;
        g.el.classList.toggle("hit", hit);
        if (hit) n++;
      });
      found.textContent = q === "" ? "" : n + " frames match";
    });
  }
})();
