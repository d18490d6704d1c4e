// One click applies an alternative term (a runner-up the drafter offers) to its field's picker:
// a single-term field (root cause) takes it instead of its term, a list field adds it. The chip
// is the picker's own (a hidden input named as the field): approve or save keeps it.
(function () {
  if (window.incidentsAlternatives) return; // the script is linked once per field with alternatives
  window.incidentsAlternatives = true;
  document.addEventListener("click", (ev) => {
    const button = ev.target.closest("[data-alt-term]");
    if (!button) return;
    const picker = button.closest(".field") && button.closest(".field").querySelector(".picker");
    if (!picker) return;
    const chips = picker.querySelector(".chips");
    const term = button.dataset.altTerm;
    if (picker.hasAttribute("data-single")) chips.replaceChildren();
    if (![...chips.querySelectorAll(".chip")].some((c) => c.dataset.term === term)) {
      const span = document.createElement("span");
      span.className = "chip";
      span.dataset.term = term;
      span.textContent = button.dataset.altLabel || term;
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = picker.dataset.name;
      input.value = term;
      const x = document.createElement("button");
      x.type = "button";
      x.className = "x";
      x.textContent = "×";
      x.setAttribute("aria-label", "remove " + term);
      span.append(input, x);
      chips.append(span);
    }
    button.classList.add("used");
    button.setAttribute("aria-pressed", "true");
  });
})();
