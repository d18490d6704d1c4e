// The static site's incident and topic pages are one page for both interface languages: English,
// or Korean when the address ends in #ko. library.css does what needs no script (the switch, the
// order of the record's languages); this puts the interface words in Korean, from LIBRARY_WORDS
// (written above this by flows/library/site.py: strings.json and the vocabularies' labels), and keeps
// #ko on the links to other such pages, so a Korean reader stays in Korean.
(function () {
  "use strict";
  var KO = window.LIBRARY_WORDS;
  var changed = [];  // [text node, its English, its element's lang] to put back

  function each(list, fn) { Array.prototype.forEach.call(list, fn); }

  function label(kind, term) { return KO.terms[kind + "/" + term] || term; }

  // A topic page's address names its kind and term (topics/KIND/TERM.html, TERM-pN.html).
  function topicTerm(href) {
    var m = /topics\/([^/]+)\/([^/]+?)(-p\d+)?\.html/.exec(href);
    return m ? KO.terms[m[1] + "/" + decodeURIComponent(m[2])] : null;
  }

  // An interface string with {names} in it, read back in English and said in Korean.
  function formatted(en) {
    for (var i = 0; i < KO.formats.length; i++) {
      var names = [];
      var source = KO.formats[i][0].replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, function (_, name) {
        names.push(name);
        return "(.+?)";
      });
      var m = new RegExp("^" + source + "$").exec(en);
      if (m) {
        return KO.formats[i][1].replace(/\{(\w+)\}/g, function (_, name) { return m[names.indexOf(name) + 1]; });
      }
    }
    return null;
  }

  // Why a related incident is related: from its data-c (cause), data-k (components), data-o, data-r.
  function why(el) {
    var d = el.dataset, said = [], r = KO.reasons;
    if (d.c) said.push(r.same_cause + ": " + label("root_cause", d.c));
    if (d.k) said.push(r.shared_components.replace("{terms}", d.k.split(" ").map(function (c) { return label("component", c); }).join(", ")));
    if (d.o) said.push(r.same_org);
    if (d.r) said.push(r.may_recur);
    return said.join(" · ");
  }

  function korean() {
    var where = "main h2, main dt, .total, nav.pages a, nav.pages span, .review, .recurrence span, " +
      "header.topic .meta span, header.topic h1, a.tag, .related > p, .why";
    each(document.querySelectorAll(where), function (el) {
      var node = el.firstChild;
      if (!node || node.nodeType !== 3) return;
      var en = node.nodeValue, text;
      if (el.classList.contains("tag")) text = topicTerm(el.getAttribute("href"));
      else if (el.tagName === "H1") text = topicTerm(window.location.pathname);
      else if (el.classList.contains("why")) text = why(el);
      else text = Object.prototype.hasOwnProperty.call(KO.words, en) ? KO.words[en] : formatted(en);
      if (!text || text === en) return;
      changed.push([node, en, el.getAttribute("lang")]);
      node.nodeValue = text;
      el.setAttribute("lang", "ko");
    });
  }

  function english() {
    changed.reverse().forEach(function (c) {
      c[0].nodeValue = c[1];
      if (c[2] === null) c[0].parentNode.removeAttribute("lang");
      else c[0].parentNode.setAttribute("lang", c[2]);
    });
    changed = [];
  }

  function show() {
    var ko = window.location.hash === "#ko";
    english();
    if (ko) korean();
    each(document.querySelectorAll("a[href]"), function (a) {
      var href = a.getAttribute("href");
      if (/^[^:#]*\.html(#ko)?$/.test(href) && !/(^|\/)index\.html/.test(href)) {
        a.setAttribute("href", href.replace(/#ko$/, "") + (ko ? "#ko" : ""));
      }
    });
  }

  window.addEventListener("hashchange", show);
  show();
})();
