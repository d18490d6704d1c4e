// The static site's search: flows/library/tokens.py's tokenizer, line for line (stem, queryWords),
// over the sharded index flows/library/site.py writes to static/search/. A search loads the
// manifest, the shards its words need and the list data of the results it shows, each once, as
// <script> elements (browsers refuse fetch() from file://). Results come newest first.
var LIBRARY = (function () {
  "use strict";
  var loaded = {};
  var waiting = {};
  var CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff";
  var RUNS = new RegExp("([" + CJK + "]+)|((?:(?![" + CJK + "])[\\p{L}\\p{N}])+)", "gu");
  var base = "";

  function shard(name, data) {
    loaded[name] = data;
    (waiting[name] || []).forEach(function (done) { done(data); });
    delete waiting[name];
  }

  function load(name) {
    if (loaded[name] !== undefined) return Promise.resolve(loaded[name]);
    return new Promise(function (resolve, reject) {
      if (waiting[name]) { waiting[name].push(resolve); return; }
      waiting[name] = [resolve];
      var script = document.createElement("script");
      script.src = base + name + ".js";
      script.onerror = function () { reject(new Error("cannot load " + script.src)); };
      document.head.appendChild(script);
    });
  }

  function normalize(text) { return text.normalize("NFKC").toLowerCase(); }

  // tokens.stem
  function stem(word) {
    if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
    var ends = function (s) { return word.slice(-s.length) === s; };
    if ((ends("ies") || ends("ied")) && word.length > 4) word = word.slice(0, -3) + "y";
    else if (ends("sses") || ends("xes") || ends("zes") || ends("ches") || ends("shes")) word = word.slice(0, -2);
    else if (ends("s") && !ends("ss") && !ends("us") && !ends("is")) word = word.slice(0, -1);
    else if (ends("ing") && word.length > 5 && /[aeiouy]/.test(word.slice(0, -3))) word = undouble(word.slice(0, -3));
    else if (ends("ed") && word.length > 4 && /[aeiouy]/.test(word.slice(0, -2))) word = undouble(word.slice(0, -2));
    if (word.slice(-1) === "e" && word.length > 3) word = word.slice(0, -1);
    return word;
  }

  function undouble(word) {
    var last = word.slice(-1);
    if (word.length > 3 && last === word.slice(-2, -1) && "lszaeiou".indexOf(last) < 0) return word.slice(0, -1);
    return word;
  }

  // tokens.tokens
  function tokens(text) {
    var out = [];
    normalize(text).replace(RUNS, function (_, cjk, other) {
      if (cjk) {
        for (var i = 0; i < cjk.length - 1; i++) out.push(cjk.slice(i, i + 2));
        out.push(cjk.slice(-1));
      } else {
        out.push(stem(other));
      }
      return _;
    });
    return out;
  }

  // tokens.query_words
  function queryWords(q) {
    var seen = {};
    var found = [];
    q.replace(/"/g, " ").split(/\s+/).forEach(function (raw) {
      if (!raw || seen[raw] || found.length >= 32) return;
      seen[raw] = true;
      var prefix = /\*$/.test(raw);
      var runs = [];
      normalize(raw.replace(/\*+$/, "")).replace(RUNS, function (_, cjk, other) { runs.push([cjk, other]); return _; });
      var parts = [];
      runs.forEach(function (run, i) {
        var last = i === runs.length - 1;
        if (run[0]) {
          if (run[0].length === 1) {
            parts.push(run[0]);
            if (last) prefix = true;
          } else {
            for (var j = 0; j < run[0].length - 1; j++) parts.push(run[0].slice(j, j + 2));
          }
        } else {
          parts.push(stem(run[1]));
        }
      });
      if (parts.length) found.push({ text: raw, phrase: parts, prefix: prefix });
    });
    return found;
  }

  // site.shard_key
  function shardKey(token) {
    if (token.charAt(0) === "@") return "at-" + token.slice(1).split(":")[0].replace(/_/g, "-");
    var first = token.charAt(0);
    if (/^[a-z0-9]$/i.test(first)) return token.slice(0, 2);
    return "u" + (token.codePointAt(0) % 256);
  }

  return { shard: shard, load: load, get: function (name) { return loaded[name]; }, stem: stem, tokens: tokens, queryWords: queryWords, shardKey: shardKey,
    setBase: function (b) { base = b; } };
})();

function librarySearch(text) {
  "use strict";
  LIBRARY.setBase(text.base);
  var q = document.getElementById("q");
  var component = document.getElementById("f-component");
  var cause = document.getElementById("f-root_cause");
  var total = document.getElementById("total");
  var list = document.getElementById("incidents");
  var empty = document.querySelector(".results .empty");
  var more = document.createElement("button");
  more.type = "button";
  more.className = "more";
  more.textContent = text.more;
  more.hidden = true;
  list.after(more);
  if (!empty) {
    empty = document.createElement("p");
    empty.className = "empty";
    empty.textContent = text.empty;
    empty.hidden = true;
    total.after(empty);
  }
  var manifest = null;
  var shown = [];  // positions matching the current search, newest first
  var rendered = 0;
  var current = 0;  // the latest search: an older one finishing late is dropped

  // site.unpack: a postings list from its string (the gaps, five bits a character, lowest first).
  var PACK = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
  function unpack(text) {
    var out = [], at = 0, gap = 0, shift = 0;
    for (var i = 0; i < text.length; i++) {
      var value = PACK.indexOf(text.charAt(i));
      gap += (value & 31) * Math.pow(2, shift);
      if (value & 32) { shift += 5; } else { at += gap; out.push(at); gap = 0; shift = 0; }
    }
    return out;
  }

  function keysFor(token, prefix) {
    if (prefix && token.length === 1 && /^[a-z0-9]$/.test(token)) {
      return manifest.shards.filter(function (k) { return k.charAt(0) === token && k.length <= 2; });
    }
    var key = LIBRARY.shardKey(token);
    return manifest.shards.indexOf(key) >= 0 ? [key] : [];
  }

  // Rows (and records, through their terms' labels) holding a token, or any token it starts.
  function postings(token, prefix) {
    var rows = {}, records = {};
    keysFor(token, prefix).forEach(function (key) {
      var data = LIBRARY.get(key);
      ["rows", "terms"].forEach(function (kind) {
        var table = data[kind];
        var target = kind === "rows" ? rows : records;
        Object.keys(table).forEach(function (t) {
          if (t === token || (prefix && t.slice(0, token.length) === token)) {
            unpack(table[t]).forEach(function (n) { target[n] = true; });
          }
        });
      });
    });
    return { rows: rows, records: records };
  }

  function intersect(a, b) {
    var out = {};
    Object.keys(a).forEach(function (k) { if (b[k]) out[k] = true; });
    return out;
  }

  // A word's rows and records: every token of its phrase in one row (or in the record's terms).
  function wordMatches(word) {
    var result = null;
    word.phrase.forEach(function (token, i) {
      var found = postings(token, word.prefix && i === word.phrase.length - 1);
      if (result === null) result = found;
      else result = { rows: intersect(result.rows, found.rows), records: intersect(result.records, found.records) };
    });
    return result;
  }

  // Records holding every word within one language's text (each word in that row or in its terms),
  // as the server's index answers.
  function matching(words) {
    var slots = manifest.slots;
    var each = words.map(wordMatches);
    var candidates = null;
    each.forEach(function (m) {
      var here = {};
      Object.keys(m.rows).forEach(function (r) { here[Math.floor(r / slots)] = true; });
      Object.keys(m.records).forEach(function (p) { here[p] = true; });
      candidates = candidates === null ? here : intersect(candidates, here);
    });
    var out = [];
    Object.keys(candidates || {}).forEach(function (p) {
      var position = Number(p);
      var rowsLeft = null;
      each.forEach(function (m) {
        if (m.records[position]) return;
        var mine = {};
        for (var s = 0; s < slots; s++) if (m.rows[position * slots + s]) mine[s] = true;
        rowsLeft = rowsLeft === null ? mine : intersect(rowsLeft, mine);
      });
      if (rowsLeft === null || Object.keys(rowsLeft).length) out.push(position);
    });
    return out.sort(function (a, b) { return a - b; });
  }

  function filtered(positions, kind, term) {
    var found = postings("@" + kind + ":" + term, false).records;
    return positions === null
      ? Object.keys(found).map(Number).sort(function (a, b) { return a - b; })
      : positions.filter(function (p) { return found[p]; });
  }

  function label(kind, term) {
    var labels = (manifest.labels[kind] || {})[term] || {};
    return labels[text.ui] || labels.en || term;
  }

  function marked(title, words) {
    // The title with the query's words marked (text nodes: a title is never HTML).
    var span = document.createElement("span");
    var lowered = title.toLowerCase();
    var marks = [];
    words.forEach(function (w) {
      var needle = w.phrase.length > 1 && /[^a-z0-9]/.test(w.phrase[0])
        ? w.phrase.map(function (p, i) { return i ? p.slice(-1) : p; }).join("")
        : w.text.replace(/\*+$/, "").toLowerCase();
      var at = needle ? lowered.indexOf(needle) : -1;
      if (at >= 0) marks.push([at, at + needle.length]);
    });
    marks.sort(function (a, b) { return a[0] - b[0]; });
    var pos = 0;
    marks.forEach(function (m) {
      if (m[0] < pos) return;
      span.appendChild(document.createTextNode(title.slice(pos, m[0])));
      var mark = document.createElement("mark");
      mark.textContent = title.slice(m[0], m[1]);
      span.appendChild(mark);
      pos = m[1];
    });
    span.appendChild(document.createTextNode(title.slice(pos)));
    return span;
  }

  function item(row, words) {
    var li = document.createElement("li");
    li.className = "incident";
    li.setAttribute("data-id", row[0]);
    var a = document.createElement("a");
    a.className = "title";
    a.href = text.incident.replace("ID_", row[0]);
    a.lang = row[3];
    a.appendChild(marked(row[4], words));
    li.appendChild(a);
    var meta = document.createElement("div");
    meta.className = "meta";
    meta.textContent = row[0] + " · " + row[2] + (row[1] ? " · " + row[1] : "");
    li.appendChild(meta);
    var tags = document.createElement("ul");
    tags.className = "tags";
    var terms = (row[5] && row[5] !== "unknown" ? [["root_cause", row[5]]] : [])
      .concat(row[6].map(function (c) { return ["component", c]; }));
    terms.forEach(function (pair) {
      var tag = document.createElement("a");
      tag.className = pair[0] === "root_cause" ? "tag cause" : "tag";
      tag.href = text.topic.replace("KIND_", pair[0]).replace("TERM_", pair[1]);
      tag.textContent = label(pair[0], pair[1]);
      var each = document.createElement("li");
      each.appendChild(tag);
      tags.appendChild(each);
    });
    li.appendChild(tags);
    return li;
  }

  function showMore(words, search) {
    var page = shown.slice(rendered, rendered + text.pageSize);
    var chunks = {};
    page.forEach(function (p) { chunks["m" + Math.floor(p / manifest.chunk)] = true; });
    return Promise.all(Object.keys(chunks).map(LIBRARY.load)).then(function () {
      if (search !== current) return;
      page.forEach(function (p) {
        var row = LIBRARY.get("m" + Math.floor(p / manifest.chunk))[p % manifest.chunk];
        list.appendChild(item(row, words));
      });
      rendered += page.length;
      more.hidden = rendered >= shown.length;
      list.setAttribute("aria-busy", "false");
    });
  }

  // aria-busy on the results while a search is pending: assistive technology and tests wait for it.
  function busy() { list.setAttribute("aria-busy", "true"); }

  function run() {
    busy();
    var search = ++current;
    var words = LIBRARY.queryWords(q.value);
    var params = new URLSearchParams();
    if (q.value) params.set("q", q.value);
    if (component.value) params.set("component", component.value);
    if (cause.value) params.set("root_cause", cause.value);
    if (window.location.protocol !== "file:" && window.history.replaceState) {
      var query = params.toString();
      window.history.replaceState(null, "", query ? "?" + query : window.location.pathname);
    }
    total.textContent = text.loading;
    return LIBRARY.load("manifest").then(function (m) {
      manifest = m;
      var needed = {};
      words.forEach(function (w) {
        w.phrase.forEach(function (t, i) {
          keysFor(t, w.prefix && i === w.phrase.length - 1).forEach(function (k) { needed[k] = true; });
        });
      });
      if (component.value) needed[LIBRARY.shardKey("@component:")] = true;
      if (cause.value) needed[LIBRARY.shardKey("@root_cause:")] = true;
      Object.keys(needed).forEach(function (k) { if (manifest.shards.indexOf(k) < 0) delete needed[k]; });
      return Promise.all(Object.keys(needed).map(LIBRARY.load));
    }).then(function () {
      if (search !== current) return;
      var positions = null;
      if (words.length) positions = matching(words);
      else if (q.value.trim()) positions = [];
      if (component.value) positions = filtered(positions, "component", component.value);
      if (cause.value) positions = filtered(positions, "root_cause", cause.value);
      if (positions === null) {
        positions = [];
        for (var i = 0; i < manifest.records; i++) positions.push(i);
      }
      shown = positions;
      rendered = 0;
      list.textContent = "";
      total.textContent = (shown.length === 1 ? text.results_one : text.results).replace("{n}", String(shown.length));
      empty.hidden = shown.length > 0;
      return showMore(words, search);
    }).catch(function (error) {
      total.textContent = String(error.message || error);
      list.setAttribute("aria-busy", "false");
    });
  }

  more.addEventListener("click", function () { showMore(LIBRARY.queryWords(q.value), current); });
  var start = new URLSearchParams(window.location.search);
  if (start.get("q")) q.value = start.get("q");
  if (start.get("component")) component.value = start.get("component");
  if (start.get("root_cause")) cause.value = start.get("root_cause");
  var timer = null;
  [q, component, cause].forEach(function (el) {
    el.addEventListener("input", function () { busy(); clearTimeout(timer); timer = setTimeout(run, 120); });
    el.addEventListener("change", function () { busy(); clearTimeout(timer); run(); });
  });
  if (q.value || component.value || cause.value) run();
  window.librarySearchRun = run;  // tests and the form's submit
}
