// gpuvet: keep a benchmark run page's state badge and step table in line with its job.
// static/jobs.js polls the run's status JSON (its job box points there) and announces each answer as a
// "gpuvet:job" event; the answer carries the run's live state under "run", read with the job's, so the
// run badge, the steps and the job box always show the same moment.
(function () {
  "use strict";
  if (window.gpuvetBenchRunStarted) { return; }
  window.gpuvetBenchRunStarted = true;

  function renderStep(row, step) {
    row.setAttribute("data-status", step.status);
    var status = row.querySelector(".step-status .badge");
    if (status) {
      status.textContent = step.status_label;
      status.className = "badge text-bg-" + step.colour;
    }
    var duration = row.querySelector(".step-duration");
    if (duration) { duration.textContent = step.duration || ""; }
  }

  function render(run) {
    var badge = document.getElementById("run-state");
    if (badge) {
      badge.textContent = run.state_label;
      badge.className = "badge text-bg-" + run.colour + " run-state";
      badge.setAttribute("data-state", run.state);
    }
    for (var i = 0; i < run.steps.length; i += 1) {
      var step = run.steps[i];
      var row = document.querySelector("#steps tr[data-step='" + step.step + "']");
      if (row) { renderStep(row, step); }
    }
  }

  document.addEventListener("gpuvet:job", function (event) {
    if (event.detail && event.detail.run) { render(event.detail.run); }
  });
})();
