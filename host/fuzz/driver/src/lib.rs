//! A small, deterministic fuzzing driver for Cairn's decoder targets, shared by the host's
//! `cairn-fuzz` and the guest SDK's wire targets (so it has no dependencies).
//!
//! A [`Target`] is a function over bytes that panics when a property it checks does not hold
//! and says whether the decoder accepted the input. [`fuzz`] runs it for a fixed number of
//! executions on inputs made from its seed corpus: seeds first, then mutants (bit flips,
//! interesting bytes and words, inserted and deleted ranges, dictionary tokens, splices of two
//! inputs) and now and then fresh random bytes. Inputs a decoder accepts join the pool, so
//! mutation goes on from inputs that already pass the outer checks — the only feedback; there
//! is no coverage guidance. Given a seed the run is deterministic.
//!
//! Findings are panics (a broken property or a crash), executions slower than a limit, and
//! executions that allocate more than a limit (with [`CountingAlloc`] installed as the global
//! allocator). A run that hangs past the hang limit, overflows its stack or exhausts the
//! allocation cap aborts; [`main`] runs each target in a child process so that such a death is
//! reported with the input that caused it (written to `current` before every execution).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What a target did with an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The decoder accepted the input (it joins the mutation pool).
    Accepted,
    /// The decoder refused the input with an error, as it should for malformed input.
    Rejected,
}

/// A fuzz target: a decoder and the properties checked on what it returns.
#[derive(Clone, Copy)]
pub struct Target {
    pub name: &'static str,
    /// One line: what is decoded and what is checked.
    pub about: &'static str,
    /// Runs one input; panics when a property does not hold.
    pub run: fn(&[u8]) -> Outcome,
    /// Real inputs to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Tokens worth inserting (keywords, separators, signatures).
    pub dictionary: &'static [&'static str],
    /// The longest input generated.
    pub max_len: usize,
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct Options {
    pub runs: u64,
    pub seed: u64,
    /// An execution slower than this is a finding.
    pub slow: Duration,
    /// An execution still running after this aborts the process (a hang).
    pub hang: Duration,
    /// An execution that allocates more than this many bytes at once is a finding.
    pub alloc_limit: usize,
    /// The stack of the thread executions run on (tokio's worker threads have 2 MiB).
    pub stack: usize,
    /// Where each input is written before it runs (so a process death names it).
    pub current_file: Option<PathBuf>,
    /// Print progress to stderr every so many executions (0: never).
    pub progress: u64,
    /// Stop early after this long (for time-boxed long runs); `None`: run all executions.
    pub max_time: Option<Duration>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            runs: 10_000,
            seed: 1,
            slow: Duration::from_secs(2),
            hang: Duration::from_secs(30),
            alloc_limit: 256 << 20,
            stack: 2 << 20,
            current_file: None,
            progress: 0,
            max_time: None,
        }
    }
}

/// What went wrong with one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Panic(String),
    Slow(Duration),
    Alloc(usize),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Panic(message) => write!(f, "panic: {message}"),
            Problem::Slow(d) => write!(f, "slow: {:.2} s for one input", d.as_secs_f64()),
            Problem::Alloc(bytes) => write!(f, "allocated {} MiB for one input", bytes >> 20),
        }
    }
}

/// One input that broke a property.
#[derive(Debug, Clone)]
pub struct Finding {
    pub execution: u64,
    pub input: Vec<u8>,
    pub problem: Problem,
}

/// The figures of one run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub target: String,
    pub executions: u64,
    pub accepted: u64,
    pub findings: Vec<Finding>,
    pub elapsed: Duration,
    pub slowest: Duration,
    pub peak_alloc: usize,
}

impl Report {
    /// `name: N executions (A accepted) in S s, F findings`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} executions ({} accepted) in {:.1} s, slowest {:.1} ms, peak {} KiB per input, {} finding{}",
            self.target,
            self.executions,
            self.accepted,
            self.elapsed.as_secs_f64(),
            self.slowest.as_secs_f64() * 1000.0,
            self.peak_alloc >> 10,
            self.findings.len(),
            if self.findings.len() == 1 { "" } else { "s" }
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Allocation accounting.

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Live bytes beyond which allocations fail (the process aborts with the input on record),
/// so a hostile length cannot take the machine's memory.
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

/// A global allocator that counts live bytes and the peak, for the allocation checks:
/// `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc;` in the binary or test.
pub struct CountingAlloc;

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        if live > CAP.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old {
            let live = LIVE.fetch_add(new_size - old, Ordering::Relaxed) + (new_size - old);
            if live > CAP.load(Ordering::Relaxed) {
                LIVE.fetch_sub(new_size - old, Ordering::Relaxed);
                return std::ptr::null_mut();
            }
            PEAK.fetch_max(live, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

// ---------------------------------------------------------------------------------------------
// Random numbers (SplitMix64: small, fast, deterministic).

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

const INTERESTING_BYTES: &[u8] = &[
    0, 1, 2, 5, 0x7f, 0x80, 0xff, 0xfe, b'"', b'\\', b'{', b'}', b'[', b']', b':', b',', b'\n',
    b'.', b'$', b'*', b'0', b'9', b' ', b'-', b'\t', b'#', b'&', b'!', b'\'', 0x1b, 0xc3, 0xe2,
    0xf0,
];

const INTERESTING_WORDS: &[u32] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    11,
    12,
    16,
    64,
    65,
    127,
    128,
    129,
    255,
    256,
    512,
    1024,
    65535,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
];

struct Mutator<'a> {
    rng: Rng,
    dictionary: &'a [&'a str],
    max_len: usize,
}

impl Mutator<'_> {
    fn mutate(&mut self, input: &mut Vec<u8>, pool: &[Vec<u8>]) {
        let rounds = 1 + self.rng.below(4) * usize::from(self.rng.chance(2));
        for _ in 0..rounds {
            self.once(input, pool);
        }
        input.truncate(self.max_len);
    }

    fn pos(&mut self, input: &[u8]) -> usize {
        self.rng.below(input.len() + 1)
    }

    fn once(&mut self, input: &mut Vec<u8>, pool: &[Vec<u8>]) {
        let rng = &mut self.rng;
        match rng.below(13) {
            0 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] ^= 1 << rng.below(8);
            }
            1 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] = rng.next() as u8;
            }
            2 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] = INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())];
            }
            3 => {
                let at = self.pos(input);
                let n = 1 + self.rng.below(8);
                let bytes: Vec<u8> = (0..n).map(|_| self.rng.next() as u8).collect();
                input.splice(at..at, bytes);
            }
            4 if !input.is_empty() => {
                let start = rng.below(input.len());
                let len = 1 + rng.below((input.len() - start).min(16));
                input.drain(start..start + len);
            }
            5 if !input.is_empty() => {
                // Copy a range elsewhere (repeats structure: nested brackets, repeated nodes).
                let start = rng.below(input.len());
                let len = 1 + rng.below((input.len() - start).min(64));
                let chunk = input[start..start + len].to_vec();
                let at = self.pos(input);
                input.splice(at..at, chunk);
            }
            6 | 7 if !self.dictionary.is_empty() => {
                let token = self.dictionary[rng.below(self.dictionary.len())].as_bytes();
                let at = self.pos(input);
                if self.rng.chance(2) {
                    input.splice(at..at, token.iter().copied());
                } else {
                    let end = (at + token.len()).min(input.len());
                    input.splice(at..end, token.iter().copied());
                }
            }
            8 if !pool.is_empty() => {
                let other = &pool[rng.below(pool.len())];
                let cut = self.pos(input);
                let from = self.rng.below(other.len() + 1);
                input.truncate(cut);
                input.extend_from_slice(&other[from..]);
            }
            9 if input.len() >= 4 => {
                let i = rng.below(input.len() - 3);
                let word = INTERESTING_WORDS[rng.below(INTERESTING_WORDS.len())];
                input[i..i + 4].copy_from_slice(&word.to_le_bytes());
            }
            10 if !input.is_empty() => {
                let i = rng.below(input.len());
                let delta = 1 + rng.below(16) as u8;
                input[i] = if rng.chance(2) {
                    input[i].wrapping_add(delta)
                } else {
                    input[i].wrapping_sub(delta)
                };
            }
            11 if !input.is_empty() => {
                let len = rng.below(input.len());
                input.truncate(len);
            }
            _ => {
                let at = self.pos(input);
                let b = INTERESTING_BYTES[self.rng.below(INTERESTING_BYTES.len())];
                input.insert(at, b);
            }
        }
    }

    fn fresh(&mut self) -> Vec<u8> {
        let len = if self.rng.chance(8) {
            self.rng.below(self.max_len + 1)
        } else {
            self.rng.below(65)
        };
        (0..len).map(|_| self.rng.next() as u8).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Running.

thread_local! {
    static IN_FUZZ: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that records panics on fuzzing threads instead of printing them,
/// and leaves other threads' panics to the previous hook.
fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if IN_FUZZ.with(Cell::get) {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string panic)".to_owned());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{message}{at}")));
        } else {
            previous(info);
        }
    }));
}

/// Runs `input` once, checking for panics, time and allocation.
fn execute(
    target: &Target,
    input: &[u8],
    options: &Options,
) -> (Outcome, Option<Problem>, Duration, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let start = Instant::now();
    IN_FUZZ.with(|f| f.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    IN_FUZZ.with(|f| f.set(false));
    let took = start.elapsed();
    let allocated = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    match result {
        Err(_) => {
            let message = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "(panic)".to_owned());
            (
                Outcome::Rejected,
                Some(Problem::Panic(message)),
                took,
                allocated,
            )
        }
        Ok(outcome) if took > options.slow => (outcome, Some(Problem::Slow(took)), took, allocated),
        Ok(outcome) if allocated > options.alloc_limit => {
            (outcome, Some(Problem::Alloc(allocated)), took, allocated)
        }
        Ok(outcome) => (outcome, None, took, allocated),
    }
}

/// Mutation pool size; beyond it, accepted inputs replace random non-seed entries.
const POOL: usize = 4096;

/// Runs `target` for `options.runs` executions (the seeds first) and reports what it found.
pub fn fuzz(target: &Target, options: &Options) -> Report {
    install_panic_hook();
    let target = *target;
    let options = options.clone();
    let worker = std::thread::Builder::new()
        .name(format!("fuzz-{}", target.name))
        .stack_size(options.stack)
        .spawn(move || fuzz_on_this_thread(&target, &options));
    match worker.map(|w| w.join()) {
        Ok(Ok(report)) => report,
        Ok(Err(_)) => panic!("the fuzzing driver itself panicked"),
        Err(e) => panic!("cannot start a fuzzing thread: {e}"),
    }
}

fn fuzz_on_this_thread(target: &Target, options: &Options) -> Report {
    let started = Instant::now();
    let mut report = Report {
        target: target.name.to_owned(),
        ..Report::default()
    };
    let mut current = options.current_file.as_ref().map(|path| {
        File::create(path).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()))
    });
    let watchdog = Watchdog::start(target.name, options.hang, options.current_file.clone());

    let seeds = (target.seeds)();
    let seed_count = seeds.len();
    let mut pool: Vec<Vec<u8>> = seeds.clone();
    let mut mutator = Mutator {
        rng: Rng(options.seed ^ 0x5EED_CA1E_F00D_0000),
        dictionary: target.dictionary,
        max_len: target.max_len,
    };

    for execution in 0..options.runs {
        if execution % 1024 == 0
            && options
                .max_time
                .is_some_and(|limit| started.elapsed() > limit)
        {
            break;
        }
        let input = if (execution as usize) < seed_count {
            seeds[execution as usize].clone()
        } else if pool.is_empty() || mutator.rng.chance(16) {
            mutator.fresh()
        } else {
            let mut input = pool[mutator.rng.below(pool.len())].clone();
            mutator.mutate(&mut input, &pool);
            input
        };
        if let Some(file) = current.as_mut() {
            // Best effort: a failed write only loses the reproducer of a process death.
            let _ = file.set_len(0);
            let _ = file.write_all_at(&input, 0);
        }
        watchdog.begin();
        let (outcome, problem, took, allocated) = execute(target, &input, options);
        watchdog.end();
        report.executions += 1;
        report.slowest = report.slowest.max(took);
        report.peak_alloc = report.peak_alloc.max(allocated);
        if let Some(problem) = problem {
            // Keep one finding per distinct problem text (the first, usually the smallest input
            // is found by shrinking by hand).
            let known = report
                .findings
                .iter()
                .any(|f| same_kind(&f.problem, &problem));
            if !known {
                report.findings.push(Finding {
                    execution,
                    input,
                    problem,
                });
            }
            continue;
        }
        if outcome == Outcome::Accepted {
            report.accepted += 1;
            if execution as usize >= seed_count {
                if pool.len() < POOL {
                    pool.push(input);
                } else {
                    let slot = seed_count + mutator.rng.below(POOL - seed_count.min(POOL - 1));
                    if let Some(entry) = pool.get_mut(slot) {
                        *entry = input;
                    }
                }
            }
        }
        if options.progress > 0 && (execution + 1) % options.progress == 0 {
            eprintln!(
                "  {}: {} executions, {} accepted, {} findings, {:.0} s",
                target.name,
                execution + 1,
                report.accepted,
                report.findings.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Two problems of the same kind at the same place count once.
fn same_kind(a: &Problem, b: &Problem) -> bool {
    match (a, b) {
        (Problem::Panic(x), Problem::Panic(y)) => panic_site(x) == panic_site(y),
        (Problem::Slow(_), Problem::Slow(_)) | (Problem::Alloc(_), Problem::Alloc(_)) => true,
        _ => false,
    }
}

/// The location part of a recorded panic (`… at file:line`), or the whole message.
fn panic_site(message: &str) -> &str {
    message.rsplit_once(" at ").map_or(message, |(_, at)| at)
}

/// Aborts the process when one execution runs past the hang limit.
struct Watchdog {
    started_ms: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    epoch: Instant,
}

impl Watchdog {
    fn start(name: &'static str, hang: Duration, current: Option<PathBuf>) -> Watchdog {
        let started_ms = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (started_ms.clone(), stop.clone());
        let epoch = Instant::now();
        std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let began = s.load(Ordering::Relaxed);
                if began == 0 {
                    continue;
                }
                let now = epoch.elapsed().as_millis() as u64;
                if now.saturating_sub(began) > hang.as_millis() as u64 {
                    let at = current
                        .as_ref()
                        .map(|p| format!(" (input in {})", p.display()))
                        .unwrap_or_default();
                    eprintln!(
                        "{name}: HANG: one execution ran over {} s{at}",
                        hang.as_secs()
                    );
                    std::process::abort();
                }
            }
        });
        Watchdog {
            started_ms,
            stop,
            epoch,
        }
    }

    fn begin(&self) {
        let now = self.epoch.elapsed().as_millis() as u64;
        self.started_ms.store(now.max(1), Ordering::Relaxed);
    }

    fn end(&self) {
        self.started_ms.store(0, Ordering::Relaxed);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------------
// The command line.

const USAGE: &str = "\
usage: <fuzz binary> list
       <fuzz binary> run <target|all> [--runs N] [--max-seconds T] [--seed S] [--out DIR]
                         [--slow-ms MS] [--progress N]
       <fuzz binary> replay <target> FILE...

run: each target runs in a child process for N executions (default 100000; at most T seconds
each with --max-seconds); findings are
written to DIR/<target>/ (default target/fuzz-findings) and the exit status is 1 if any.
replay: runs one target on files (reproducers), printing what each does.";

/// The fuzzing command for a set of targets (the body of a fuzz binary's `main`).
pub fn main(targets: &[Target]) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("list") => {
            for t in targets {
                println!("{:<16} {}", t.name, t.about);
            }
            0
        }
        Some("run") => command_run(targets, &args[1..]),
        Some("child") => command_child(targets, &args[1..]),
        Some("replay") => command_replay(targets, &args[1..]),
        _ => {
            eprintln!("{USAGE}");
            2
        }
    };
    std::process::exit(code)
}

struct RunArgs {
    which: String,
    options: Options,
    out: PathBuf,
}

fn parse_run_args(args: &[String]) -> Result<RunArgs, String> {
    let mut which = None;
    let mut options = Options {
        runs: 100_000,
        progress: 0,
        ..Options::default()
    };
    let mut out = PathBuf::from("target/fuzz-findings");
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let number = |name: &str, v: String| {
            v.replace('_', "")
                .parse::<u64>()
                .map_err(|_| format!("{name}: {v:?} is not a number"))
        };
        match arg.as_str() {
            "--runs" => options.runs = number("--runs", value("--runs")?)?,
            "--seed" => options.seed = number("--seed", value("--seed")?)?,
            "--progress" => options.progress = number("--progress", value("--progress")?)?,
            "--max-seconds" => {
                let secs = number("--max-seconds", value("--max-seconds")?)?;
                options.max_time = Some(Duration::from_secs(secs));
            }
            "--slow-ms" => {
                options.slow = Duration::from_millis(number("--slow-ms", value("--slow-ms")?)?)
            }
            "--out" => out = PathBuf::from(value("--out")?),
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            other if which.is_none() => which = Some(other.to_owned()),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    Ok(RunArgs {
        which: which.ok_or("which target? (a name from `list`, or all)")?,
        options,
        out,
    })
}

fn select<'t>(targets: &'t [Target], which: &str) -> Result<Vec<&'t Target>, String> {
    if which == "all" {
        return Ok(targets.iter().collect());
    }
    targets
        .iter()
        .find(|t| t.name == which)
        .map(|t| vec![t])
        .ok_or_else(|| format!("no target {which:?} (see `list`)"))
}

fn command_run(targets: &[Target], args: &[String]) -> i32 {
    let run = match parse_run_args(args).and_then(|r| select(targets, &r.which).map(|s| (r, s))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return 2;
        }
    };
    let (run, selected) = run;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("cannot find this program to run targets in child processes: {e}");
            return 2;
        }
    };
    let mut total_findings = 0;
    let mut lines = Vec::new();
    for target in selected {
        let dir = run.out.join(target.name);
        if let Err(e) = fs::create_dir_all(&dir) {
            eprintln!("cannot create {}: {e}", dir.display());
            return 2;
        }
        eprintln!(
            "== {} ({} executions, seed {})",
            target.name, run.options.runs, run.options.seed
        );
        let mut child = std::process::Command::new(&exe);
        let o = &run.options;
        child.arg("child").arg(target.name);
        child.args(["--runs", &o.runs.to_string(), "--seed", &o.seed.to_string()]);
        child.args(["--progress", &o.progress.to_string()]);
        child.args(["--slow-ms", &o.slow.as_millis().to_string()]);
        if let Some(limit) = o.max_time {
            child.args(["--max-seconds", &limit.as_secs().to_string()]);
        }
        child.arg("--out").arg(&run.out);
        let output = child.stderr(std::process::Stdio::inherit()).output();
        let line = match output {
            Ok(out) if out.status.success() || out.status.code() == Some(1) => {
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                let findings: usize = text
                    .lines()
                    .find_map(|l| l.strip_prefix("findings="))
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or(0);
                total_findings += findings;
                text.lines()
                    .find_map(|l| l.strip_prefix("summary="))
                    .unwrap_or("(no summary)")
                    .to_owned()
            }
            Ok(out) => {
                // The child died (abort, stack overflow, allocation cap): keep its last input.
                total_findings += 1;
                let current = dir.join("current");
                let kept = dir.join(format!(
                    "crash-{}",
                    fnv(&fs::read(&current).unwrap_or_default())
                ));
                let _ = fs::rename(&current, &kept);
                format!(
                    "{}: the process died ({}) — input kept in {}",
                    target.name,
                    out.status,
                    kept.display()
                )
            }
            Err(e) => {
                total_findings += 1;
                format!("{}: cannot start a child process: {e}", target.name)
            }
        };
        eprintln!("{line}");
        lines.push(line);
    }
    println!("\nsummary:");
    for line in &lines {
        println!("  {line}");
    }
    println!(
        "{total_findings} finding{} in all",
        if total_findings == 1 { "" } else { "s" }
    );
    i32::from(total_findings > 0)
}

/// Runs one target in this process (started by [`command_run`]); prints `summary=` and
/// `findings=` lines and writes each finding's input next to `current`.
fn command_child(targets: &[Target], args: &[String]) -> i32 {
    let Ok(run) = parse_run_args(args) else {
        return 2;
    };
    let Ok(selected) = select(targets, &run.which) else {
        return 2;
    };
    let target = selected[0];
    let dir = run.out.join(target.name);
    let mut options = run.options;
    options.current_file = Some(dir.join("current"));
    // A hostile length must not take the machine: beyond 4 GiB live, allocation fails.
    CAP.store(4 << 30, Ordering::Relaxed);
    let report = fuzz(target, &options);
    let _ = fs::remove_file(dir.join("current"));
    for finding in &report.findings {
        let file = dir.join(format!("finding-{}", fnv(&finding.input)));
        let _ = fs::write(&file, &finding.input);
        eprintln!(
            "{}: FINDING at execution {}: {}\n  input ({} bytes) in {}: {}",
            target.name,
            finding.execution,
            finding.problem,
            finding.input.len(),
            file.display(),
            preview(&finding.input)
        );
    }
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "summary={}", report.summary());
    let _ = writeln!(stdout, "findings={}", report.findings.len());
    i32::from(!report.findings.is_empty())
}

fn command_replay(targets: &[Target], args: &[String]) -> i32 {
    let Some((which, files)) = args.split_first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let target = match select(targets, which) {
        Ok(t) if t.len() == 1 => t[0],
        _ => {
            eprintln!("replay needs one target name");
            return 2;
        }
    };
    install_panic_hook();
    let options = Options::default();
    let mut failed = 0;
    for file in files {
        let input = match fs::read(Path::new(file)) {
            Ok(input) => input,
            Err(e) => {
                eprintln!("{file}: {e}");
                failed += 1;
                continue;
            }
        };
        let (outcome, problem, took, allocated) = execute(target, &input, &options);
        match problem {
            Some(problem) => {
                failed += 1;
                println!("{file}: {problem}");
            }
            None => println!(
                "{file}: ok ({outcome:?}, {:.1} ms, {} KiB)",
                took.as_secs_f64() * 1000.0,
                allocated >> 10
            ),
        }
    }
    i32::from(failed > 0)
}

/// A short name for an input (FNV-1a).
fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The first bytes of an input, escaped, for the report.
fn preview(input: &[u8]) -> String {
    let shown: String = input
        .iter()
        .take(160)
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    if input.len() > 160 {
        format!("\"{shown}\"…")
    } else {
        format!("\"{shown}\"")
    }
}

/// Runs every target for `runs` executions with a fixed seed and panics listing the findings:
/// the short runs inside the test suite.
pub fn check_all(targets: &[Target], runs: u64) {
    for target in targets {
        check(target, runs);
    }
}

/// [`check_all`] for one target.
pub fn check(target: &Target, runs: u64) {
    let options = Options {
        runs,
        seed: 1,
        // Generous: the test suite may share a loaded machine; real slowness shows in long runs.
        slow: Duration::from_secs(10),
        ..Options::default()
    };
    let report = fuzz(target, &options);
    eprintln!("{}", report.summary());
    if !report.findings.is_empty() {
        let list: Vec<String> = report
            .findings
            .iter()
            .map(|f| format!("  {} on input {}", f.problem, preview(&f.input)))
            .collect();
        panic!("{} found:\n{}", report.summary(), list.join("\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crashes_on_xyz(data: &[u8]) -> Outcome {
        assert!(!data.windows(3).any(|w| w == b"xyz"), "found xyz");
        if data.starts_with(b"x") {
            Outcome::Accepted
        } else {
            Outcome::Rejected
        }
    }

    fn target() -> Target {
        Target {
            name: "xyz",
            about: "panics on xyz",
            run: crashes_on_xyz,
            seeds: || vec![b"x".to_vec(), b"xy".to_vec()],
            dictionary: &["z"],
            max_len: 16,
        }
    }

    #[test]
    fn finds_a_panic_reachable_by_mutation_and_is_deterministic() {
        let options = Options {
            runs: 20_000,
            ..Options::default()
        };
        let first = fuzz(&target(), &options);
        assert_eq!(first.executions, 20_000);
        assert!(first.accepted > 0);
        assert_eq!(first.findings.len(), 1, "{first:?}");
        assert!(matches!(&first.findings[0].problem, Problem::Panic(m) if m.contains("found xyz")));
        assert!(first.findings[0].input.windows(3).any(|w| w == b"xyz"));
        let second = fuzz(&target(), &options);
        assert_eq!(second.findings[0].execution, first.findings[0].execution);
        assert_eq!(second.accepted, first.accepted);
    }

    #[test]
    fn seeds_run_first_and_a_clean_target_has_no_findings() {
        fn never(_: &[u8]) -> Outcome {
            Outcome::Rejected
        }
        let clean = Target {
            run: never,
            ..target()
        };
        let report = fuzz(
            &clean,
            &Options {
                runs: 500,
                ..Options::default()
            },
        );
        assert_eq!((report.executions, report.accepted), (500, 0));
        assert!(report.findings.is_empty());
    }
}
