// Client-side search of the static site: substring matching (any language, a word inside a
// sentence) over the prebuilt index in search-index.js, plus the component and root-cause filters.
function librarySearch(text) {
  "use strict";
  var entries = {};
  (window.LIBRARY_INDEX || []).forEach(function (e) { entries[e.id] = e; });
  var q = document.getElementById("q");
  var component = document.getElementById("f-component");
  var cause = document.getElementById("f-root_cause");
  var total = document.getElementById("total");
  var items = Array.prototype.slice.call(document.querySelectorAll("#incidents li.incident"));
  var empty = document.querySelector(".results .empty");
  if (!empty) {
    empty = document.createElement("p");
    empty.className = "empty";
    empty.textContent = text.empty;
    total.after(empty);
  }
  function run() {
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    items.forEach(function (li) {
      var e = entries[li.getAttribute("data-id")];
      var ok = !!e && words.every(function (w) { return e.text.indexOf(w) >= 0; });
      if (ok && component.value) ok = e.components.indexOf(component.value) >= 0;
      if (ok && cause.value) ok = e.root_cause === cause.value;
      li.hidden = !ok;
      if (ok) shown += 1;
    });
    total.textContent = text.results.replace("{n}", String(shown));
    empty.hidden = shown > 0;
    var params = new URLSearchParams();
    if (q.value) params.set("q", q.value);
    if (component.value) params.set("component", component.value);
    if (cause.value) params.set("root_cause", cause.value);
    var query = params.toString();
    if (window.location.protocol !== "file:" && window.history.replaceState) {
      window.history.replaceState(null, "", query ? "?" + query : window.location.pathname);
    }
  }
  var start = new URLSearchParams(window.location.search);
  if (start.get("q")) q.value = start.get("q");
  if (start.get("component")) component.value = start.get("component");
  if (start.get("root_cause")) cause.value = start.get("root_cause");
  [q, component, cause].forEach(function (el) { el.addEventListener("input", run); el.addEventListener("change", run); });
  run();
}
