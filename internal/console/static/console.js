// ocpihub console: small progressive enhancements. Every page works without
// this file; with it, times stay relative, dangerous buttons ask first,
// filters apply on change, live pages refresh, and secrets copy in a click.
(function () {
  "use strict";

  // Relative times: "3 min ago", recomputed every 20 s from datetime.
  function ago(t, now) {
    var d = (now - t) / 1000, future = d < 0, s;
    if (future) d = -d;
    if (d < 10) return "just now";
    if (d < 60) s = Math.floor(d) + " s";
    else if (d < 3600) s = Math.floor(d / 60) + " min";
    else if (d < 172800) s = Math.floor(d / 3600) + " h";
    else s = Math.floor(d / 86400) + " d";
    return future ? "in " + s : s + " ago";
  }
  function refreshTimes(root) {
    var now = Date.now();
    (root || document).querySelectorAll("time[data-ago]").forEach(function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (!isNaN(t)) el.textContent = ago(t, now);
    });
  }

  // Forms with data-confirm ask before they submit.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) e.preventDefault();
  }, true);

  // Filter forms apply as soon as a select changes.
  document.addEventListener("change", function (e) {
    var f = e.target.form;
    if (f && f.hasAttribute("data-autosubmit") && e.target.tagName === "SELECT") f.submit();
  });

  // Copy buttons: data-copy names the element whose text is copied.
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button[data-copy]");
    if (!b) return;
    var src = document.querySelector(b.dataset.copy);
    if (!src || !navigator.clipboard) return;
    navigator.clipboard.writeText(src.textContent.trim()).then(function () {
      var old = b.textContent;
      b.textContent = "Copied";
      setTimeout(function () { b.textContent = old; }, 1500);
    });
  });

  // Live pages: main[data-refresh] reloads its content every N seconds while
  // the tab is visible and nothing in it is being edited.
  function live() {
    var main = document.getElementById("main");
    var every = main && parseInt(main.dataset.refresh, 10);
    if (!every) return;
    setInterval(function () {
      if (document.hidden) return;
      var a = document.activeElement;
      if (a && main.contains(a) && /INPUT|SELECT|TEXTAREA/.test(a.tagName)) return;
      fetch(location.href, { credentials: "same-origin", headers: { "X-Console-Refresh": "1" } })
        .then(function (r) { return r.ok && !r.redirected ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var doc = new DOMParser().parseFromString(html, "text/html");
          var next = doc.getElementById("main");
          if (!next) return;
          main.innerHTML = next.innerHTML;
          refreshTimes(main);
        })
        .catch(function () {});
    }, every * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    refreshTimes();
    setInterval(refreshTimes, 20000);
    live();
  });
})();
