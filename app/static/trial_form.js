// gpuvet: the trial-server form shows only the credentials of the chosen login method (all of them without JS).
(function () {
  var method = document.getElementById("f-auth_method");
  if (!method) {
    return;
  }
  function follow() {
    var usesKey = method.value === "key";
    document.querySelectorAll("#server-form .auth-key").forEach(function (field) {
      field.hidden = !usesKey;
    });
    document.querySelectorAll("#server-form .auth-password").forEach(function (field) {
      field.hidden = usesKey;
    });
  }
  var note = document.getElementById("auth-note");
  if (note) {
    note.hidden = true;
  }
  method.addEventListener("change", follow);
  follow();
})();
