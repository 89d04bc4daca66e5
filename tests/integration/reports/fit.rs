//! Every page fits the width it is read at. Headless Chromium loads the report of a run
//! (`plain.json`), of an Exchange validation (`exchange.json`) and of a cache comparison
//! (`compare.json`) at 1280 and at 800 px wide,
//! scrollbars shown as a reader sees them, in a copy of the page that measures itself
//! ([`MEASURE`]): no element may reach past its container (its parent; for what an SVG draws,
//! the SVG, so a clipped tick label counts), except in a wrapper that scrolls sideways by
//! itself (`overflow-x: auto`, where wide tables go), and the page itself must not scroll
//! sideways. At 1280 px no table may even need its wrapper to scroll. Screenshots of the page at both widths land in the scratch directory, and are
//! copied to `$STORLAB_SCREENSHOTS` when it names a directory, to be looked at. Without
//! Chromium these tests skip (a failure under CI).

use super::browser::{BROWSER, chromium, run_chromium};
use super::render_report;
use crate::harness::scratch;
use std::path::Path;

/// The widths a report must fit, px.
const WIDTHS: [u32; 2] = [1280, 800];

/// From this width on, every table of these reports is whole on the screen (narrower, a wide
/// table may scroll sideways in its wrapper).
const WHOLE_TABLES_FROM: u32 = 1280;

/// Appended to a copy of a page: measures every element against its container and writes
/// what it found into `<body data-fit="JSON">` (`width`: the window's, `client` and `scroll`:
/// the page's visible and scrollable widths, `problems`: one line per element that sticks
/// out, and by how much, `scrolled`: the wrappers whose content scrolls sideways).
const MEASURE: &str = r#"<script>
(function () {
  function scrollsX(el) {
    var o = getComputedStyle(el).overflowX;
    return o === 'auto' || o === 'scroll';
  }
  function describe(el, withText) {
    var d = el.tagName.toLowerCase();
    if (el.id) d += '#' + el.id;
    var c = el.getAttribute('class');
    if (c) d += '.' + c.trim().split(/\s+/).join('.');
    var chart = el.closest('[data-chart]');
    if (chart) d += ' (chart ' + chart.getAttribute('data-chart') + ')';
    var text = withText ? (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ') : '';
    if (text) d += ' "' + text.slice(0, 40) + '"';
    return d;
  }
  var problems = [], scrolled = [];
  var all = document.body.getElementsByTagName('*');
  for (var i = 0; i < all.length; i++) {
    var el = all[i];
    if (el.tagName.toLowerCase() === 'script') continue;
    var box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (scrollsX(el) && el.scrollWidth > el.clientWidth + 1) {
      scrolled.push(describe(el.firstElementChild || el, true) + ': ' + el.scrollWidth + ' px in ' + el.clientWidth + ' px');
    }
    var container = el.ownerSVGElement || el.parentElement;
    if (!container || scrollsX(container)) continue;
    var outer = container.getBoundingClientRect();
    var over = Math.max(box.right - outer.right, outer.left - box.left);
    if (over > 1) {
      problems.push(describe(el, true) + ' is ' + over.toFixed(1) + ' px wider than ' + describe(container, false)
        + ' (' + box.left.toFixed(1) + '..' + box.right.toFixed(1) + ' in ' + outer.left.toFixed(1) + '..' + outer.right.toFixed(1) + ')');
    }
  }
  var root = document.documentElement;
  document.body.setAttribute('data-fit', JSON.stringify({
    width: window.innerWidth, client: root.clientWidth, scroll: root.scrollWidth, problems: problems,
    scrolled: scrolled
  }));
})();
</script>"#;

/// What [`MEASURE`] found in the DOM Chromium dumped.
#[derive(Debug, serde::Deserialize)]
struct Fit {
    width: u32,
    client: u32,
    scroll: u32,
    problems: Vec<String>,
    scrolled: Vec<String>,
}

/// The `data-fit` attribute of the dumped DOM `dom`, decoded.
fn fit_of(what: &str, dom: &str) -> Fit {
    let value = dom
        .split_once("data-fit=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(v, _)| v)
        .unwrap_or_else(|| panic!("{what}: the measuring script left no data-fit in the DOM"));
    let json = value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{what}: data-fit {json:?}: {e}"))
}

/// The width of a PNG, from its header.
fn png_width(bytes: &[u8]) -> Option<u32> {
    (bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 24)
        .then(|| u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]))
}

/// The report of fixture `name` at every width of [`WIDTHS`]: measured, and photographed.
fn report_fits(test: &str, name: &str) {
    let Some(browser) = chromium(test) else {
        return;
    };
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let (page, html) = render_report(dir.path(), name);
    assert!(
        html.contains("</body>"),
        "report of {name}.json: no </body>"
    );
    let measured = dir.path().join(format!("{name}-measured.html"));
    std::fs::write(
        &measured,
        html.replacen("</body>", &format!("{MEASURE}</body>"), 1),
    )
    .expect("write the measuring copy");
    let url = |p: &Path| format!("file://{}", p.canonicalize().unwrap().display());
    for width in WIDTHS {
        let what = format!("report of {name}.json at {width} px");
        let dom = dir.path().join(format!("{name}-{width}.dom.html"));
        run_chromium(
            &browser,
            dir.path(),
            &url(&measured),
            &["--dump-dom".into(), format!("--window-size={width},1000")],
            &dom,
        );
        let fit = fit_of(
            &what,
            &std::fs::read_to_string(&dom).expect("the dumped DOM"),
        );
        assert_eq!(fit.width, width, "{what}: the window's width");
        assert!(
            fit.problems.is_empty(),
            "{what}: elements wider than their container:\n{}",
            fit.problems.join("\n")
        );
        if width >= WHOLE_TABLES_FROM {
            assert!(
                fit.scrolled.is_empty(),
                "{what}: tables that scroll sideways:\n{}",
                fit.scrolled.join("\n")
            );
        } else if !fit.scrolled.is_empty() {
            eprintln!(
                "{what}: scrolls sideways in its wrapper: {:?}",
                fit.scrolled
            );
        }
        assert!(
            fit.scroll <= fit.client,
            "{what}: the page scrolls sideways ({} px of content in {} px)",
            fit.scroll,
            fit.client
        );

        let png = dir.path().join(format!("{name}-{width}.png"));
        run_chromium(
            &browser,
            dir.path(),
            &url(&page),
            &[
                format!("--screenshot={}", png.display()),
                format!("--window-size={width},4000"),
            ],
            &dir.path().join(format!("{name}-{width}.stdout")),
        );
        let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{what}: no screenshot: {e}"));
        assert_eq!(png_width(&bytes), Some(width), "{what}: the screenshot");
        assert!(
            bytes.len() > 10 * 1024,
            "{what}: the screenshot is only {} bytes",
            bytes.len()
        );
        if let Some(keep) = std::env::var_os("STORLAB_SCREENSHOTS") {
            let keep = Path::new(&keep);
            std::fs::create_dir_all(keep).expect("create $STORLAB_SCREENSHOTS");
            std::fs::copy(&png, keep.join(png.file_name().unwrap()))
                .expect("copy the screenshot to $STORLAB_SCREENSHOTS");
        }
    }
}

#[test]
fn the_report_of_a_run_fits_1280_and_800_px() {
    report_fits("the_report_of_a_run_fits_1280_and_800_px", "plain");
}

#[test]
fn the_report_of_an_exchange_validation_fits_1280_and_800_px() {
    report_fits(
        "the_report_of_an_exchange_validation_fits_1280_and_800_px",
        "exchange",
    );
}

#[test]
fn the_report_of_a_cache_comparison_fits_1280_and_800_px() {
    report_fits(
        "the_report_of_a_cache_comparison_fits_1280_and_800_px",
        "compare",
    );
}
