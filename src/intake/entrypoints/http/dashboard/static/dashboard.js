// The dashboard's one script: a progressive enhancement only. Every page works without
// it; where it runs, a few actions need no page load. Served from this origin (the CSP
// allows no inline script).
"use strict";

// "Copy as JSON" on a submission: the button is hidden until this script can copy.
function enableCopyButtons() {
  if (!navigator.clipboard || !window.fetch) {
    return;
  }
  for (const button of document.querySelectorAll("button[data-copy-from]")) {
    const status = button.parentElement.querySelector(".copy-status");
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        const answer = await fetch(button.dataset.copyFrom, { credentials: "same-origin" });
        if (!answer.ok) {
          throw new Error(String(answer.status));
        }
        await navigator.clipboard.writeText(await answer.text());
        if (status) status.textContent = "Copied.";
      } catch {
        if (status) status.textContent = "Could not copy: open View as JSON instead.";
      }
    });
  }
}

// "Select all on this page" in the inbox: without this script a link to the page with
// every box ticked; with it, the boxes are ticked in place (and cleared by the same link).
function enableSelectAll() {
  for (const link of document.querySelectorAll("a[data-select]")) {
    const form = link.closest("form");
    if (!form) continue;
    const boxes = () => form.querySelectorAll('input[type="checkbox"][name="id"]');
    const label = (selecting) =>
      selecting ? `Select all ${boxes().length} on this page` : "Clear the selection";
    link.addEventListener("click", (event) => {
      event.preventDefault();
      const selecting = link.dataset.select === "page";
      for (const box of boxes()) box.checked = selecting;
      link.dataset.select = selecting ? "none" : "page";
      link.textContent = label(!selecting);
    });
  }
}

enableCopyButtons();
enableSelectAll();
