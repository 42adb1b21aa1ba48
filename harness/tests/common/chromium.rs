//! Headless Chromium for the tests that look at a page as a reader sees it (`report.html`, the
//! results matrix): finding the browser, running it with a bound on its time, its console, and
//! the screenshot it took, decoded.
//!
//! Without Chromium (the Debian package `chromium`, which `.ci/run` installs; another binary
//! with `GE_CONFORMANCE_CHROMIUM`) the rendering tests say so on standard error and pass,
//! unless `GE_CONFORMANCE_REQUIRE_CHROMIUM` is set, as in CI, where a missing Chromium fails
//! them.

#![allow(dead_code)] // each test crate uses the helpers it needs

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium's binary (`GE_CONFORMANCE_CHROMIUM` when set, else `chromium` on the `PATH` or
/// in `/usr/bin`), or why there is none.
pub fn binary() -> Result<PathBuf, String> {
    if let Some(given) = std::env::var_os("GE_CONFORMANCE_CHROMIUM") {
        let given = PathBuf::from(given);
        return if given.is_file() {
            Ok(given)
        } else {
            Err(format!(
                "GE_CONFORMANCE_CHROMIUM names {}, which is not a file",
                given.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "chromium is not installed (Debian package `chromium`; .ci/run installs it)".to_owned()
        })
}

/// Skips with the reason on standard error (not captured by the test runner), or fails when
/// `GE_CONFORMANCE_REQUIRE_CHROMIUM` is set.
pub fn skip(why: &str) {
    assert!(
        std::env::var_os("GE_CONFORMANCE_REQUIRE_CHROMIUM").is_none(),
        "GE_CONFORMANCE_REQUIRE_CHROMIUM is set, but {why}"
    );
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED (headless-Chromium rendering): {why}"
    );
}

/// Chromium's binary, or `None` after [`skip`] said why there is none.
pub fn chromium_or_skip() -> Option<PathBuf> {
    match binary() {
        Ok(c) => Some(c),
        Err(why) => {
            skip(&why);
            None
        }
    }
}

/// What one run of Chromium printed.
#[derive(Debug)]
pub struct Run {
    /// Its standard output (the page's DOM with `--dump-dom`).
    pub stdout: String,
    /// Its log on standard error.
    pub log: String,
}

impl Run {
    /// The page's console messages (a CSP violation among them), from the log.
    pub fn console(&self) -> Vec<String> {
        self.log
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_owned)
            .collect()
    }
}

/// Runs headless Chromium on `url` with `args` besides the usual ones (a fresh profile, no
/// network of its own, the console logged), at most 120 s.
pub fn run(chromium: &Path, url: &str, args: &[String]) -> Run {
    let profile = tempfile::tempdir().expect("a fresh profile directory");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish {url} in 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Run {
        stdout: out.join().unwrap_or_default(),
        log: err.join().unwrap_or_default(),
    }
}

/// A screenshot, decoded: its size and its pixels, RGB, row by row.
#[derive(Debug)]
pub struct Screenshot {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` pixels.
    pub pixels: Vec<[u8; 3]>,
}

impl Screenshot {
    /// Reads the PNG at `path` (a failure names the log of the run that should have made it).
    pub fn read(path: &Path, log: &str) -> Screenshot {
        let file = std::fs::File::open(path)
            .unwrap_or_else(|e| panic!("no screenshot {}: {e}\n{log}", path.display()));
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("a frame");
        let channels = info.color_type.samples();
        let pixels = buf[..info.buffer_size()]
            .chunks(channels)
            .map(|px| [px[0], px[1.min(channels - 1)], px[2.min(channels - 1)]])
            .collect();
        Screenshot {
            width: info.width,
            height: info.height,
            pixels,
        }
    }

    /// The pixels of the rows from `top` down.
    pub fn below(&self, top: u32) -> &[[u8; 3]] {
        let from = (top.min(self.height) * self.width) as usize;
        &self.pixels[from.min(self.pixels.len())..]
    }
}
