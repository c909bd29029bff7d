"""Reports: provider vetting and procurement case reports as HTML and PDF.

Pipeline (each step a module with one job):
    assemble.py       the canonical JSON and SHA-256 of the inputs snapshot stored with every export
    sources.py        registry of optional inputs the domains fill (credential checks, evidence, checklist
                      ticks, benchmark measurements): a missing module or empty result marks the section
                      "未核验 / not verified" instead of failing the report

The domains gather the inputs from the database (app.credentials.report_inputs for the provider report,
app.cases.report_inputs for the case report, each source next to the data it reads); this package imports
none of them.
    document.py       provider inputs -> template context (claims, findings, charts, evidence index)
    case_document.py  case inputs -> template context
    recommend.py      registry of recommendation rules over the inputs
    charts.py         Chart (plain data) -> SVG via pygal, cleaned to a compact static SVG
    render.py         Jinja2 (autoescape, invisible control characters revealed) -> HTML
    pdf.py            HTML -> PDF with WeasyPrint, one renderer per font reusing its font setup
    fetcher.py        the only resources the renderer may load: its font files and stylesheet
    fonts.py          the GB2312 pre-subset copy of the CJK font, built once under instance/

Feeding benchmark results in (app.trials.report_inputs does): register a source in a domain module

    @source("measurements", module="app.trials.bench_runs")
    def _measurements(session, provider):
        return {
            # metric: gpu or an Offer field (intranet_gbps ...); verdict: pass | needs_review | fail
            "claims": [{"offer_id": 11, "metric": "intranet_gbps", "value": 96.5, "unit": "Gbps",
                        "verdict": "fail"}],
            "series": {
                "throughput": [{"name": "node1→node2", "unit": "Gbps", "nominal": 200,
                                "points": [[minute, gbps], ...]}],
                "iops": [{"name": "randread 4k", "nominal": 2000000, "measured": 410000}],
                "gpu_util": [{"name": "GPU0", "points": [[minute, percent], ...]}],
            },
        }

and the claims table, the measurement charts and the cover pick it up; nothing else changes.
"""
