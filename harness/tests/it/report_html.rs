//! `report.html` and the pictures of a bundle: a memory planner that shares the bytes of tensors
//! in use at once yields a bundle whose picture and `report.html` show the overlap hatched and
//! the clause named, which `verify` holds and whose changed picture it catches, and one whose
//! session never records the last feature memory an unload gives back yields a picture of
//! every failing session trial; and
//! headless Chromium renders both bundles' `report.html` and pictures with no console message,
//! not blank, with the highlight's red on screen (the screenshots are kept under
//! `target/test-artefacts/report_html/chromium/`).
//!
//! Without Chromium the rendering tests say so and pass, except in CI (`tests/common/chromium.rs`).

use crate::common;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use common::chromium::{chromium_or_skip, Screenshot};

use ge_conformance::certify::{self, Config};
use ge_conformance::{bundle, draw};
use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::vocab::session::{SessionObservation, SessionScenario};
use ge_spec::{Answer, Backend, Capability, Profile};

/// A planner that puts every tensor at offset 0, live or not (and reports the peak it makes),
/// and a session that forgets to record the last feature memory an unload gives back.
#[derive(Debug)]
struct Overlapping;

impl Backend for Overlapping {
    fn name(&self) -> &str {
        "overlapping-memory"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Memory, Capability::Session]
            .into_iter()
            .collect()
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        let mut obs = Reference::new(Profile::Documented).session(scenario)?;
        // The last feature memory an unload of the script gives back goes unrecorded (SMP-010,
        // SMP-013, SMP-014); the session's own close is the suite's model (SES-011).
        let events = scenario.events.len();
        if let Some(at) = obs.trace.iter().rposition(|e| {
            e.action == ge_spec::vocab::session::TraceAction::Free
                && !e.pool.ends_with("/io")
                && (e.step as usize) < events
        }) {
            obs.trace.remove(at);
        }
        Ok(obs)
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        let mut obs = Reference::new(Profile::Documented).memory(scenario)?;
        for offset in obs.offsets.values_mut() {
            *offset = 0;
        }
        obs.peak_bytes = scenario
            .tensors
            .iter()
            .filter(|t| obs.offsets.contains_key(&t.name))
            .map(|t| t.size)
            .max()
            .unwrap_or(0);
        Ok(obs)
    }
}

/// Where the tests keep what they made: under the workspace's `target/`.
fn artefacts(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/test-artefacts/report_html")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the artefacts directory");
    dir
}

/// The bundle of a certification of [`Overlapping`] on the trials `filter` selects, in
/// `dir/bundle`.
fn bundle_of(dir: &Path, filter: &str) -> PathBuf {
    let cfg = Config {
        filter: Some(filter.into()),
        ..Config::default()
    };
    let mut report =
        certify::certify(&Overlapping, &cfg, &mut |_, _, _| {}).expect("the run starts");
    assert!(report.totals.failed > 0, "the faulty planner fails");
    draw::attach_pictures(&mut report, &Overlapping);
    let out = dir.join("bundle");
    bundle::write(&report, &out, false).expect("the bundle is written");
    out
}

/// The bundle of the memory case where two tensors are in use at once.
fn overlapping_bundle(dir: &Path) -> PathBuf {
    bundle_of(dir, "memory-plans/overlapping-lifetimes-never-share")
}

#[test]
fn every_failing_session_trial_is_drawn() {
    let dir = artefacts("session");
    let out = bundle_of(&dir, "session-script/");
    let report = bundle::verify(&out).expect("the bundle verifies");
    let failing: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome.fails_run())
        .collect();
    assert!(!failing.is_empty(), "the forgetful session fails");
    for t in &failing {
        let file = t
            .picture
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no picture", t.name));
        let svg = std::fs::read_to_string(out.join(file)).expect("the picture");
        assert!(svg.contains("still held at the end"), "{}: {file}", t.name);
        assert!(svg.contains("violating"), "{}: {file}", t.name);
    }
}

#[test]
fn a_failing_memory_trial_is_drawn_in_the_bundle() {
    let dir = artefacts("bundle");
    let out = overlapping_bundle(&dir);
    let verified = bundle::verify(&out).expect("the bundle verifies");
    let drawn: Vec<_> = verified
        .trials
        .iter()
        .filter_map(|t| t.picture.clone())
        .collect();
    assert_eq!(drawn, ["picture-001.svg"]);
    let svg = std::fs::read_to_string(out.join("picture-001.svg")).expect("the picture");
    assert!(svg.contains("class=\"overlap\""), "the overlap is hatched");
    assert!(svg.contains("breaks DRM-011"), "the clause is named");
    assert!(svg.contains("class=\"intermediate violating\""));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("<figure>\n<svg"), "the picture is inline");
    assert!(html.contains("class=\"overlap\""));
    assert!(html.contains("memory-plans/overlapping-lifetimes-never-share"));
    assert!(html.contains("<h4>Reproduce</h4>"));
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        md.contains("](picture-001.svg)"),
        "report.md links the picture"
    );
    // Self-contained: nothing fetched, nothing run.
    for banned in ["<script", "<link", "<img", "src=", "href=", "@import"] {
        assert!(!html.contains(banned), "report.html holds {banned}");
    }
    assert!(html
        .match_indices("url(")
        .all(|(at, _)| html[at..].starts_with("url(#hatch-1)")));
    let mut ids = BTreeSet::new();
    for (at, _) in html.match_indices(" id=\"") {
        let id = html[at + 5..].split('"').next().unwrap_or_default();
        assert!(ids.insert(id.to_owned()), "id {id} is given twice");
    }

    // A changed picture is caught, and so is one no trial names.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("picture-001.svg"))
        .expect("open");
    writeln!(file, "<!-- edited -->").expect("append");
    let err = bundle::verify(&out).expect_err("a changed picture is caught");
    assert!(
        err.to_string().contains("picture-001.svg was changed"),
        "{err}"
    );
}

#[test]
fn a_picture_no_trial_names_is_caught() {
    let dir = artefacts("unnamed");
    let out = overlapping_bundle(&dir);
    // Listed with its right digest, yet named by no trial.
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
    std::fs::write(out.join("picture-002.svg"), svg).expect("write");
    let manifest = out.join(bundle::MANIFEST);
    let mut text = std::fs::read_to_string(&manifest).expect("manifest");
    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(svg.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    text.push_str(&format!("{digest}  picture-002.svg\n"));
    std::fs::write(&manifest, text).expect("write");
    let err = bundle::verify(&out).expect_err("an unnamed picture is caught");
    assert!(
        err.to_string().contains("no trial of report.json names it"),
        "{err}"
    );
}

/// What Chromium made of a page.
struct Rendered {
    /// The console's messages (any is a failure: the pages run no script).
    console: Vec<String>,
    /// Pixels, and how many are not white, and how many are the highlight's red.
    pixels: usize,
    inked: usize,
    red: usize,
}

/// Renders `page` in headless Chromium at `width`×`height` into `png` and reads the screenshot.
fn render(chromium: &Path, page: &Path, png: &Path, size: (u32, u32)) -> Rendered {
    let run = common::chromium::run(
        chromium,
        &format!("file://{}", page.display()),
        &[
            format!("--window-size={},{}", size.0, size.1),
            format!("--screenshot={}", png.display()),
        ],
    );
    let shot = Screenshot::read(png, &run.log);
    let mut rendered = Rendered {
        console: run.console(),
        pixels: 0,
        inked: 0,
        red: 0,
    };
    for [r, g, b] in shot.pixels {
        rendered.pixels += 1;
        if r < 245 || g < 245 || b < 245 {
            rendered.inked += 1;
        }
        if r > 180 && g < 90 && b < 90 {
            rendered.red += 1;
        }
    }
    rendered
}

#[test]
fn chromium_renders_the_report_and_its_pictures() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = artefacts("chromium");
    let out = overlapping_bundle(&dir.join("memory"));
    let sessions = bundle_of(&dir.join("session"), "session-script/");
    let mut pages = vec![
        (
            "memory-report.html".to_owned(),
            out.join("report.html"),
            (1600, 2400),
        ),
        (
            "memory-picture-001.svg".to_owned(),
            out.join("picture-001.svg"),
            (1900, 700),
        ),
        (
            "session-report.html".to_owned(),
            sessions.join("report.html"),
            (1600, 2400),
        ),
    ];
    for entry in std::fs::read_dir(&sessions).expect("the session bundle") {
        let name = entry.expect("an entry").file_name();
        let name = name.to_string_lossy();
        if draw::is_picture_file(&name) {
            pages.push((
                format!("session-{name}"),
                sessions.join(&*name),
                (1600, 700),
            ));
        }
    }
    for (name, page, size) in pages {
        let png = dir.join(format!("{name}.png"));
        let r = render(&chromium, &page, &png, size);
        assert!(r.console.is_empty(), "{name}: console says {:?}", r.console);
        assert!(
            r.inked * 100 > r.pixels,
            "{name}: the screenshot is blank ({} of {} pixels inked)",
            r.inked,
            r.pixels
        );
        assert!(
            r.red > 200,
            "{name}: the highlight is not on screen ({} red pixels; screenshot {})",
            r.red,
            png.display()
        );
    }
}

/// A picture a third party slipped into a bundle's page (its manifest rewritten, which an
/// integrity check cannot tell) runs no script: the page's policy allows none.
#[test]
fn a_script_slipped_into_a_picture_of_the_page_does_not_run() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = artefacts("forged");
    let out = overlapping_bundle(&dir.join("memory"));
    let page = std::fs::read_to_string(out.join("report.html")).expect("the page");
    let forged_svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"document.body.setAttribute('data-onload','1')\"><script>document.body.setAttribute('data-script','1')</script></svg>";
    let forged = page.replacen("<figure>", &format!("<figure>{forged_svg}"), 1);
    assert_ne!(forged, page, "the page has a figure to slip it into");
    let path = dir.join("forged-report.html");
    std::fs::write(&path, forged).expect("written");
    let run = common::chromium::run(
        &chromium,
        &format!("file://{}", path.display()),
        &["--dump-dom".to_owned()],
    );
    assert!(run.stdout.contains("<body"), "{}", run.log);
    assert!(
        !run.stdout.contains("data-script=\"1\"") && !run.stdout.contains("data-onload=\"1\""),
        "a script in a picture ran: {}",
        run.console().join("\n")
    );
}

#[test]
fn the_rendering_checks_catch_a_broken_page() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = artefacts("broken");
    // One page broken both ways, one browser started (each start is some 1.5 s of CPU): a
    // console error, and nothing on screen. A clean page's console is shown empty by the
    // test above, which asserts it for every page of the report.
    let broken = dir.join("broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><title>blank</title><script>console.error('deliberate')</script>",
    )
    .expect("write");
    let r = render(&chromium, &broken, &dir.join("broken.png"), (400, 300));
    assert!(!r.console.is_empty(), "a console message is seen");
    assert!(r.inked * 100 <= r.pixels, "a blank page is blank");
    assert_eq!(r.red, 0, "and has no red");
}
