// incident-ingest review pages: keyboard, evidence highlighting, vocabulary pickers, tabs.
// Plain JavaScript, no build step; everything still works as plain forms without it.
"use strict";
(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

  // --- evidence: mark text[start:end] in the extracted text and scroll to it ---
  function clearMarks() {
    $$("#doctext mark").forEach((m) => {
      const parent = m.parentNode;
      parent.replaceChild(document.createTextNode(m.textContent), m);
      parent.normalize();
    });
  }
  function mark(start, end) {
    showTab("text");
    clearMarks();
    let first = null;
    $$("#doctext .blk").forEach((blk) => {
      const s = +blk.dataset.start, e = +blk.dataset.end;
      if (e <= start || s >= end) return;
      const node = blk.firstChild;
      if (!node || node.nodeType !== 3) return;
      const from = Math.max(start, s) - s, to = Math.min(end, e) - s;
      const range = document.createRange();
      range.setStart(node, Math.min(from, node.length));
      range.setEnd(node, Math.min(to, node.length));
      const m = document.createElement("mark");
      range.surroundContents(m);
      first = first || m;
    });
    if (first) first.scrollIntoView({ block: "center" });
    return first;
  }
  function gotoOffset(offset) {
    showTab("text");
    const blk = $$("#doctext .blk").find((b) => +b.dataset.start <= offset && offset < +b.dataset.end)
      || $$("#doctext .blk").find((b) => +b.dataset.start >= offset);
    if (blk) blk.scrollIntoView({ block: "start" });
  }

  // --- tabs: extracted text / archived snapshot (the frame loads when first shown) ---
  function showTab(name) {
    $$("[data-tab]").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.tab === name)));
    $$(".tab").forEach((t) => (t.hidden = t.id !== "tab-" + name));
    const frame = $("#tab-" + name + " iframe[data-src]");
    if (frame && !frame.src) frame.src = frame.dataset.src;
  }

  // --- vocabulary pickers: an ARIA combobox over every label (en, ko, ja) and alias ---
  let vocab = {};
  const vocabEl = $("#vocab");
  if (vocabEl) vocab = JSON.parse(vocabEl.textContent);
  const norm = (s) => (s || "").toLowerCase().normalize("NFKC");
  function matches(kind, text) {
    const q = norm(text).trim();
    const terms = vocab[kind] || [];
    if (!q) return terms.slice(0, 12);
    const scored = [];
    for (const t of terms) {
      const names = [t.term, t.en, t.local, ...t.aliases].map(norm);
      let best = 9;
      for (const n of names) {
        if (n === q) best = Math.min(best, 0);
        else if (n.startsWith(q)) best = Math.min(best, 1);
        else if (n.includes(q)) best = Math.min(best, 2);
      }
      if (best < 9) scored.push([best, t]);
    }
    scored.sort((a, b) => a[0] - b[0] || a[1].term.localeCompare(b[1].term));
    return scored.slice(0, 12).map((x) => x[1]);
  }
  function chip(picker, t) {
    const span = document.createElement("span");
    span.className = "chip";
    span.dataset.term = t.term;
    span.textContent = t.local ? t.en + " · " + t.local : t.en;
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = picker.dataset.name;
    input.value = t.term;
    const x = document.createElement("button");
    x.type = "button";
    x.className = "x";
    x.textContent = "×";
    x.setAttribute("aria-label", "remove " + t.term);
    span.append(input, x);
    return span;
  }
  function choose(picker, t) {
    const chips = $(".chips", picker);
    if (picker.hasAttribute("data-single")) chips.replaceChildren();
    if (!$$(".chip", chips).some((c) => c.dataset.term === t.term)) chips.append(chip(picker, t));
    const input = $(".pick", picker);
    input.value = "";
    closeOptions(picker);
    input.focus();
  }
  function status(picker, text) {
    const s = $(".picker-status", picker);
    if (s) s.textContent = text;
  }
  function setActive(picker, index) {
    const input = $(".pick", picker);
    const items = $$(".options [role=option]", picker);
    items.forEach((li, i) => {
      li.classList.toggle("active", i === index);
      li.setAttribute("aria-selected", String(i === index));
    });
    if (index >= 0 && items[index]) {
      input.setAttribute("aria-activedescendant", items[index].id);
      items[index].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }
  function closeOptions(picker) {
    const list = $(".options", picker);
    list.hidden = true;
    list.replaceChildren();
    const input = $(".pick", picker);
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }
  function openOptions(picker) {
    const list = $(".options", picker);
    const input = $(".pick", picker);
    list.replaceChildren();
    const found = matches(picker.dataset.kind, input.value);
    found.forEach((t, i) => {
      const li = document.createElement("li");
      li.setAttribute("role", "option");
      li.id = list.id + "-" + i;
      li.dataset.term = t.term;
      const label = document.createElement("span");
      label.className = "opt-label";
      label.textContent = t.en + (t.local ? " · " + t.local : "");
      const key = document.createElement("small");
      key.textContent = t.term;
      const def = document.createElement("small");
      def.className = "definition";
      def.textContent = t.definition || "";
      li.append(label, " ", key, def);
      li.addEventListener("mousedown", (ev) => { ev.preventDefault(); choose(picker, t); });
      li._term = t;
      list.append(li);
    });
    if (!found.length) {
      // Nothing matches: say so (in the list, and to a screen reader through the status line).
      const li = document.createElement("li");
      li.className = "no-match";
      li.setAttribute("role", "option");
      li.setAttribute("aria-disabled", "true");
      li.setAttribute("aria-selected", "false");
      li.id = list.id + "-none";
      li.textContent = "No matching term for “" + input.value.trim() + "”: try English, 한국어, 日本語 or a synonym.";
      list.append(li);
      status(picker, "No matching term.");
    } else {
      status(picker, found.length + " terms; up and down arrows to choose, Enter to pick.");
    }
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
    setActive(picker, found.length ? 0 : -1);
  }
  $$(".picker").forEach((picker) => {
    const input = $(".pick", picker);
    input.addEventListener("input", () => openOptions(picker));
    input.addEventListener("focus", () => openOptions(picker));
    input.addEventListener("blur", () => setTimeout(() => closeOptions(picker), 150));
    input.addEventListener("keydown", (ev) => {
      const items = $$(".options li:not(.no-match)", picker);
      const at = items.findIndex((li) => li.classList.contains("active"));
      if (ev.altKey) return; // Alt+arrows: the next field needing attention (below)
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        if ($(".options", picker).hidden) { openOptions(picker); return; }
        if (!items.length) return;
        const next = (at + (ev.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
        setActive(picker, next);
      } else if (ev.key === "Escape" && !$(".options", picker).hidden) {
        ev.preventDefault();
        ev.stopPropagation();
        closeOptions(picker);
      } else if (ev.key === "Enter") {
        ev.preventDefault();
        if (at >= 0) choose(picker, items[at]._term);
      } else if (ev.key === "Backspace" && !input.value && !picker.hasAttribute("data-single")) {
        const last = $$(".chip", picker).pop();
        if (last) last.remove();
      }
    });
    picker.addEventListener("click", (ev) => {
      if (ev.target.classList.contains("x")) ev.target.closest(".chip").remove();
    });
  });

  // --- clicks ---
  document.addEventListener("click", (ev) => {
    const q = ev.target.closest(".quote[data-start]");
    if (q) { mark(+q.dataset.start, +q.dataset.end); return; }
    const g = ev.target.closest("[data-goto]");
    if (g) { gotoOffset(+g.dataset.goto); return; }
    const t = ev.target.closest("[data-tab]");
    if (t) { showTab(t.dataset.tab); return; }
    if (ev.target.closest("[data-help]")) { $("#help").showModal(); return; }
    const all = ev.target.closest("[data-select-all]");
    if (all) $$("input[name=ids]:not(:disabled)").forEach((c) => (c.checked = all.checked));
  });
  const bulk = $("#bulk");
  if (bulk) bulk.addEventListener("submit", (ev) => {
    const n = $$("input[name=ids]:checked").length;
    if (!n) { ev.preventDefault(); alert("Select the drafts to reject first (x or the boxes)."); }
  });

  // --- fields needing attention: marked by the server, low confidence or empty ---
  const attention = () => $$(".fields .field.bad, .fields .field.low, .fields .field.empty");
  function focusField(field) {
    const control = $("input:not([type=hidden]), textarea, select", field);
    field.scrollIntoView({ block: "center" });
    if (control) control.focus({ preventScroll: true });
  }
  function jumpAttention(step) {
    const all = attention();
    if (!all.length) return;
    const current = document.activeElement && document.activeElement.closest(".field");
    let at = current ? all.indexOf(current) : -1;
    if (at < 0 && current) {
      // Not on one of them: the first one after (or before) the current field in the page.
      const after = all.findIndex((f) => current.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING);
      at = step > 0 ? (after < 0 ? all.length : after) - 1 : (after < 0 ? all.length : after);
    }
    focusField(all[(at + step + all.length) % all.length]);
  }
  // After a 422 the server names the first marked field: focus goes there, not the page top.
  const approveForm = $("#approve-form");
  const firstProblem = approveForm && approveForm.dataset.firstProblem;
  if (firstProblem) {
    const target = document.getElementById(firstProblem);
    if (target) {
      const field = target.closest(".field");
      (field || target).scrollIntoView({ block: "center" });
      target.focus({ preventScroll: true });
    }
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.altKey && (ev.key === "ArrowDown" || ev.key === "ArrowUp") && $(".fields")) {
      ev.preventDefault();
      jumpAttention(ev.key === "ArrowDown" ? 1 : -1);
    }
  });

  // --- keyboard ---
  let row = -1;
  const rows = () => $$("tr[data-href]");
  function selectRow(i) {
    const all = rows();
    if (!all.length) return;
    row = Math.max(0, Math.min(all.length - 1, i));
    all.forEach((r, k) => r.classList.toggle("selected", k === row));
    all[row].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && typing(document.activeElement)) { document.activeElement.blur(); return; }
    if (typing(ev.target) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const pager = $(".pager");
    const go = (url) => { if (url) window.location.href = url; };
    switch (ev.key) {
      case "j":
        if (pager) go(pager.dataset.next); else selectRow(row + 1);
        break;
      case "k":
        if (pager) go(pager.dataset.prev); else selectRow(row - 1);
        break;
      case "Enter":
        if (!pager && row >= 0) go(rows()[row].dataset.href); else return;
        break;
      case "x":
        if (!pager && row >= 0) { const c = $("input[name=ids]", rows()[row]); if (c && !c.disabled) c.checked = !c.checked; }
        break;
      case "a": {
        const f = $("#approve-form");
        if (f && $("[data-approve]")) f.requestSubmit();
        break;
      }
      case "s": {
        const save = $("[data-save]");
        if (save) $("#approve-form").requestSubmit(save); else return;
        break;
      }
      case "r": {
        const code = $("#reject-code") || $("#bulk select[name=code]");
        if (code) code.focus();
        break;
      }
      case "n":
        if ($(".fields")) jumpAttention(1); else return;
        break;
      case "p":
        if ($(".fields")) jumpAttention(-1); else return;
        break;
      case "e": {
        const first = $(".fields input:not([type=hidden]), .fields textarea");
        if (first) first.focus();
        break;
      }
      case "/": {
        const f = $("[data-filter]");
        if (f) f.focus(); else go("/queue");
        break;
      }
      case "u": {
        const undo = $("#undo-form");
        if (undo) undo.requestSubmit(); else return;
        break;
      }
      case "?":
        $("#help").showModal();
        break;
      default:
        return;
    }
    ev.preventDefault();
  });
  $$("tr[data-href]").forEach((tr, i) => tr.addEventListener("dblclick", () => (window.location.href = tr.dataset.href)));
})();
