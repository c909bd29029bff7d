// gpuvet: small form helpers, kept out of the HTML (the CSP forbids inline scripts); every page works without them.
// - <input data-filter-select="ID">: typing narrows the options of the select #ID (the box is hidden until this runs).
// - <button data-copy="ID" data-copied="text">: copies the value of #ID and says so in the button's status element.
// - <button data-confirm="question"> (a submit button): asks before that button sends the form.
(function () {
  document.querySelectorAll("[data-filter-select]").forEach(function (box) {
    var select = document.getElementById(box.getAttribute("data-filter-select"));
    if (!select) { return; }
    box.hidden = false;
    box.addEventListener("input", function () {
      var words = box.value.trim().toLowerCase();
      var first = null;
      Array.prototype.forEach.call(select.options, function (option) {
        var shown = !option.value || !words || option.text.toLowerCase().indexOf(words) !== -1;
        option.hidden = !shown;
        option.disabled = !shown;
        if (shown && option.value && !first) { first = option; }
      });
      var current = select.selectedIndex < 0 ? null : select.options[select.selectedIndex];
      if (words && first && (!current || current.hidden || !current.value)) {
        first.selected = true;
      }
    });
  });

  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-copy"));
      var status = document.getElementById(button.getAttribute("aria-describedby") || "");
      var said = function (ok) {
        if (status) { status.textContent = button.getAttribute(ok ? "data-copied" : "data-copy-failed") || ""; }
      };
      if (!field) { return; }
      field.focus();
      field.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(function () { said(true); }, function () {
          said(document.execCommand && document.execCommand("copy"));
        });
      } else {
        said(document.execCommand && document.execCommand("copy"));
      }
    });
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-confirm]");
    if (button && button.type === "submit" && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });
})();
