// gpuvet: keep background-job status boxes ([data-job-url]) up to date without reloading the page.
// Polls each unfinished job's JSON every few seconds (bounded), updates the badge, progress, outcome,
// no-worker warning, error and result link, and reloads the page once when a box asks for it
// (data-reload-when-done) and the job ends.
(function () {
  "use strict";
  if (window.gpuvetJobsStarted) { return; }
  window.gpuvetJobsStarted = true;

  var INTERVAL_MS = 1500;
  var MAX_POLLS = 1200; // about 30 minutes; after that the refresh link still works

  function setHidden(element, hidden) {
    if (element) { element.classList.toggle("d-none", hidden); }
  }

  function render(box, job) {
    var badge = box.querySelector(".job-state");
    if (badge) {
      badge.textContent = job.state_label;
      badge.className = "badge text-bg-" + job.colour + " job-state";
    }
    var current = box.querySelector(".job-current");
    if (current) { current.textContent = (job.progress && job.progress.current) || ""; }
    var bar = box.querySelector(".progress-bar");
    if (bar) { bar.style.width = job.percent + "%"; }
    var progress = box.querySelector(".job-progress");
    if (progress) { progress.setAttribute("aria-valuenow", String(job.percent)); }
    setHidden(progress, job.final);
    var stalled = box.querySelector(".job-stalled");
    if (stalled) { stalled.textContent = job.stalled_message || ""; setHidden(stalled, !job.stalled); }
    var outcome = box.querySelector(".job-outcome");
    if (outcome) {
      outcome.textContent = job.outcome_message || "";
      outcome.className = "small mt-2 job-outcome text-" + job.colour;
      setHidden(outcome, !job.outcome_message);
    }
    var error = box.querySelector(".job-error");
    if (error) { error.textContent = job.error || ""; setHidden(error, !job.error); }
    var link = box.querySelector(".job-link");
    if (link) {
      if (job.link) { link.setAttribute("href", job.link); }
      setHidden(link, !job.link);
    }
    setHidden(box.querySelector(".job-refresh"), job.final);
    box.setAttribute("data-job-final", job.final ? "true" : "false");
  }

  function poll(box, count) {
    if (count >= MAX_POLLS) { return; }
    fetch(box.getAttribute("data-job-url"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (job) {
        render(box, job);
        box.dispatchEvent(new CustomEvent("gpuvet:job", { bubbles: true, detail: job })); // e.g. bench_run.js
        if (job.final) {
          if (box.getAttribute("data-reload-when-done") === "true") { window.location.reload(); }
          return;
        }
        window.setTimeout(function () { poll(box, count + 1); }, INTERVAL_MS);
      })
      .catch(function () {
        window.setTimeout(function () { poll(box, count + 1); }, INTERVAL_MS * 4);
      });
  }

  function start() {
    var boxes = document.querySelectorAll("[data-job-url][data-job-final='false']");
    for (var i = 0; i < boxes.length; i += 1) { poll(boxes[i], 0); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
