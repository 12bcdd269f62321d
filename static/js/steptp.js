/* Progressive enhancement for the server-rendered pages: the pages work without this file.
 *  - [data-math]: the element's text is LaTeX (LEIR is LaTeX-flavoured); KaTeX renders it in place, and a
 *    formula too wide for its column (it scrolls) becomes focusable, so the keyboard can scroll it.
 *  - code.language-python: highlight.js colours it.
 *  - [data-key="a"]: pressing that key (outside form fields) clicks the element; the key is shown on screen.
 *    On a disabled element the key shows why instead: the element its aria-describedby names becomes an alert.
 * Everything re-runs on content htmx swaps in.
 */
(function () {
  "use strict";

  function enhance(root) {
    if (window.katex) {
      root.querySelectorAll("[data-math]:not([data-rendered])").forEach(function (el) {
        try {
          window.katex.render(el.textContent, el, { displayMode: true, throwOnError: false, strict: "ignore" });
          el.setAttribute("data-rendered", "katex");
        } catch (e) {
          el.setAttribute("data-rendered", "error");
        }
      });
    }
    focusScrollable(root);
    if (window.hljs) {
      root.querySelectorAll("code.language-python:not([data-highlighted])").forEach(function (el) {
        window.hljs.highlightElement(el);
      });
    }
  }

  /* A formula wider than its column scrolls inside it; such a region must be reachable by keyboard
   * (tabindex 0) so it can be scrolled without a mouse. Re-checked when a <details> opens or the window
   * resizes, because a hidden formula has no width. */
  function focusScrollable(root) {
    root.querySelectorAll('[data-rendered="katex"]').forEach(function (el) {
      if (el.scrollWidth > el.clientWidth) {
        el.tabIndex = 0;
      } else {
        el.removeAttribute("tabindex");
      }
    });
  }

  document.addEventListener("toggle", function (event) { focusScrollable(event.target); }, true);
  window.addEventListener("resize", function () { focusScrollable(document); });

    function typingIn(target) {
    return target.closest("input, textarea, select, [contenteditable=true]") !== null;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return;
    var el = document.querySelector('[data-key="' + CSS.escape(event.key) + '"]');
    if (el && el.disabled) {
      var why = el.getAttribute("aria-describedby") && document.getElementById(el.getAttribute("aria-describedby"));
      if (why) {
        event.preventDefault();
        why.setAttribute("role", "alert");
        why.classList.remove("why-flash");
        void why.offsetWidth;  // restart the highlight on a repeated press
        why.classList.add("why-flash");
      }
    } else if (el) {
      event.preventDefault();
      if (el.matches("input, textarea, select")) el.focus(); else el.click();
    }
  });

  document.addEventListener("DOMContentLoaded", function () { enhance(document); });
  document.addEventListener("htmx:afterSwap", function (event) { enhance(event.target); });
})();
