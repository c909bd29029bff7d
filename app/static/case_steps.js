// gpuvet questionnaire: as the buyer types, ask the server what each answer changes and refresh the
// derived defaults (the same text the page shows after "check" without JavaScript). CSP: no inline script.
(function () {
  "use strict";
  var form = document.getElementById("step-form");
  var url = form && form.getAttribute("data-preview-url");
  if (!url || !window.fetch || !window.URLSearchParams || !window.FormData) {
    return;
  }
  var SKIP = { csrf_token: true, version: true, nav: true };
  var timer = null;
  var asked = 0;

  function query() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (!SKIP[name] && typeof value === "string") {
        params.append(name, value);
      }
    });
    return params.toString();
  }

  function showEffects(name, effects) {
    var list = document.getElementById("f-" + name + "-effects");
    if (!list) {
      return;
    }
    while (list.firstChild) {
      list.removeChild(list.firstChild);
    }
    effects.forEach(function (effect) {
      var item = document.createElement("li");
      var text = document.createElement("span");
      text.className = "effect-text fw-semibold";
      text.textContent = "→ " + effect.text;
      item.appendChild(text);
      if (effect.how) {
        item.appendChild(document.createElement("br"));
        var how = document.createElement("span");
        how.className = "effect-how";
        how.textContent = effect.how;
        item.appendChild(how);
      }
      list.appendChild(item);
    });
  }

  function showDefault(name, value) {
    var note = document.getElementById("f-" + name + "-default");
    var input = document.getElementById("f-" + name);
    if (!note || !value) {
      return;
    }
    var previous = note.getAttribute("data-value");
    var basis = note.querySelector(".derived-basis");
    if (basis) {
      basis.textContent = value.basis;
    }
    note.setAttribute("data-value", value.value);
    // A prefilled default follows its inputs until the buyer types their own figure.
    if (input && input.dataset.edited !== "1" && input.value === previous && input.value !== value.value) {
      input.value = value.value;
      return true;
    }
    return false;
  }

  function refresh() {
    var ticket = ++asked;
    fetch(url + "?" + query(), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (body) {
        if (!body || ticket !== asked) {
          return;
        }
        var moved = false;
        Object.keys(body.fields).forEach(function (name) {
          moved = showDefault(name, body.fields[name]["default"]) || moved;
          showEffects(name, body.fields[name].effects);
        });
        if (moved) {
          refresh(); // a default moved: show what the new figure changes
        }
      })
      .catch(function () {
        // Offline or signed out: the "check" button still shows the same lines from the server.
      });
  }

  function changed(event) {
    if (event.type === "input" && event.target && event.target.id) {
      event.target.dataset.edited = "1";
    }
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, 400);
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
})();
