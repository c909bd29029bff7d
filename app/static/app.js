// gpuvet: ask before a form marked data-confirm is sent (kept out of the HTML: the CSP forbids inline scripts).
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
