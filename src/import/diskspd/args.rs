//! A DiskSpd command line: split into arguments as Windows splits one (spaces, `"` quoting,
//! backslashes before a quote), its options (each value attached to its letter, `-b8K`,
//! as DiskSpd reads them; `-` or `/`) read into one [`Span`], then its targets.

use super::{
    Given, MAX_REQUESTS, MAX_THREADS, Out, Params, Span, Target, ZERO_WHY, random_buffer_note,
    write_buffer_note,
};
use crate::import::ImportError;

/// Bytes a command line may hold (Windows allows 32 767 characters).
const MAX_LENGTH: usize = 64 << 10;
/// Arguments a command line may hold.
const MAX_ARGS: usize = 4096;

/// `line` split into arguments as Windows' `CommandLineToArgvW` splits a command line:
/// whitespace separates them, `"` starts and ends quoted text (spaces kept), `\"` is a quote,
/// and backslashes are literal unless they come before a quote (2n of them then are n).
pub(super) fn tokenize(line: &str) -> Result<Vec<String>, ImportError> {
    if line.len() > MAX_LENGTH {
        return Err(ImportError::Read(format!(
            "the DiskSpd command line is {} bytes long; it holds at most {MAX_LENGTH} (Windows' limit is 32767 characters)",
            line.len()
        )));
    }
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut in_arg = false;
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let mut n = 1;
                while chars.peek() == Some(&'\\') {
                    chars.next();
                    n += 1;
                }
                in_arg = true;
                if chars.peek() == Some(&'"') {
                    cur.extend(std::iter::repeat_n('\\', n / 2));
                    if n % 2 == 1 {
                        chars.next();
                        cur.push('"');
                    }
                } else {
                    cur.extend(std::iter::repeat_n('\\', n));
                }
            }
            '"' => {
                in_arg = true;
                // `""` inside quotes is a literal quote (as Windows reads it since 2008).
                if quoted && chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = !quoted;
                }
            }
            c if c.is_whitespace() && !quoted => {
                if in_arg {
                    args.push(std::mem::take(&mut cur));
                    in_arg = false;
                    if args.len() > MAX_ARGS {
                        return Err(ImportError::Read(format!(
                            "the DiskSpd command line holds more than {MAX_ARGS} arguments; give at most {MAX_ARGS}"
                        )));
                    }
                }
            }
            c => {
                in_arg = true;
                cur.push(c);
            }
        }
    }
    if in_arg {
        args.push(cur);
    }
    Ok(args)
}

/// A command line that runs an XML profile (`-d60 -Xprofile.xml first.bin second.bin`):
/// what it gives the profile, as DiskSpd reads it (beside `-X` only `-d`, `-W`, `-C`, `-z`,
/// and the output options `-R`, `-v`, `-:`; its targets take the template paths' places).
/// `None` for a line without `-X`.
pub(super) fn profile_call(line: &str, out: &mut Out) -> Result<Option<Given>, ImportError> {
    let (tokens, split) = arguments(line)?;
    let (options, targets) = tokens.split_at(split);
    if !options.iter().any(|o| o[1..].starts_with('X')) {
        return Ok(None);
    }
    let mut given = Given::default();
    let at = |i: usize| format!("command line, argument {}", i + 1);
    let seconds = |out: &mut Out, i: usize, o: &str, v: &str, min: u64| match v.parse::<u64>() {
        Ok(s) if (min..=31_536_000).contains(&s) => Some(s),
        _ => {
            out.bad(
                &at(i),
                o,
                format!("seconds: a whole number, {min} to 31536000"),
            );
            None
        }
    };
    for (i, o) in options.iter().enumerate() {
        let letter = o[1..].chars().next().unwrap_or(' ');
        let v = &o[1 + letter.len_utf8()..];
        match letter {
            'X' if !given.profile.is_empty() => {
                out.bad(&at(i), o, "a second profile: DiskSpd runs one (-X once)")
            }
            'X' if v.is_empty() => out.bad(&at(i), o, "-X names the profile: -Xprofile.xml"),
            'X' => given.profile = v.to_string(),
            'd' => given.duration = seconds(out, i, o, v, 1),
            'W' => given.warmup = seconds(out, i, o, v, 0),
            'C' => given.cooldown = seconds(out, i, o, v, 0),
            'z' if v.is_empty() => out.note(format!("{o}: a seed from the clock in DiskSpd; storlab uses the profile's seed, or its fixed default (give -zN for a seed)")),
            'z' => match v.parse::<u64>() {
                Ok(s) => given.seed = Some(s),
                Err(_) => out.bad(&at(i), o, "a seed: a whole number"),
            },
            'R' if v.starts_with('p') => out.bad(&at(i), o, "the profile only, with nothing run: storlab import writes the converted job"),
            'R' | 'v' | ':' => out.note(format!("{o}: no effect (DiskSpd's output and experiment flags)")),
            _ => out.bad(&at(i), o, "not with -X: DiskSpd takes only -d, -W, -C, -z, -R and -v beside a profile (write the rest in the profile)"),
        }
    }
    given.targets = (targets.iter().enumerate())
        .map(|(i, t)| (t.clone(), split + i + 1))
        .collect();
    Ok(Some(given))
}

/// An argument DiskSpd reads as an option: `-x...`, or `/x...` (a `/` that is not the start
/// of a path of this system, `/mnt/f.dat`, which holds a second `/`).
fn is_switch(arg: &str) -> bool {
    match arg.strip_prefix('/') {
        Some(rest) => !rest.is_empty() && !rest.contains('/'),
        None => arg.starts_with('-') && arg.len() > 1,
    }
}

/// A DiskSpd size: whole bytes, or with a suffix K, M, G, T (KiB ... TiB) or b (blocks of
/// `block` bytes, `-b`).
fn size(v: &str, block: Option<u64>) -> Option<u64> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 1u64 << 10),
        'm' | 'M' => (&v[..v.len() - 1], 1 << 20),
        'g' | 'G' => (&v[..v.len() - 1], 1 << 30),
        't' | 'T' => (&v[..v.len() - 1], 1 << 40),
        'b' => (&v[..v.len() - 1], block?),
        _ => (v, 1),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// The fastest rate a thread may be given, I/Os a second (storlab's `rate_iops` limit).
pub(super) const MAX_RATE: f64 = 1e9;

/// The letters whose option needs a value.
const VALUED: &str = "bBcCdFgijoOPTWX";

/// The arguments of a DiskSpd command line (a pasted `diskspd.exe` at the start dropped) and
/// where its targets start; a dash of a web page's, or an option after a target, is an error.
fn arguments(line: &str) -> Result<(Vec<String>, usize), ImportError> {
    let mut tokens = tokenize(line)?;
    // A pasted `diskspd.exe ...` (or its path) at the start: the program, not an argument.
    if let Some(first) = tokens.first() {
        let l = first.to_ascii_lowercase();
        if l.ends_with("diskspd") || l.ends_with("diskspd.exe") {
            tokens.remove(0);
        }
    }
    if let Some((i, t)) = (tokens.iter().enumerate())
        .find(|(_, t)| t.starts_with(['\u{2013}', '\u{2014}', '\u{2212}', '\u{2010}', '\u{2011}']))
    {
        let dash = match t.chars().next() {
            Some('\u{2013}') => "an en dash (–)",
            Some('\u{2014}') => "an em dash (—)",
            Some('\u{2212}') => "a minus sign (−)",
            _ => "a Unicode hyphen (‐)",
        };
        let fixed: String = std::iter::once('-').chain(t.chars().skip(1)).collect();
        return Err(ImportError::Read(format!(
            "the DiskSpd command line, argument {}: `{t}` starts with {dash}, as web pages print a hyphen; DiskSpd reads options only after - or /, and would take it for a target: write {fixed} (every dash of the line a plain -)",
            i + 1
        )));
    }
    let split = tokens
        .iter()
        .position(|t| !is_switch(t))
        .unwrap_or(tokens.len());
    if let Some((i, t)) = (tokens[split..].iter().enumerate()).find(|(_, t)| is_switch(t)) {
        return Err(ImportError::Read(format!(
            "the DiskSpd command line, argument {}: `{t}` comes after the first target `{}`; DiskSpd reads options only before its targets: put it before them",
            split + i + 1,
            tokens[split]
        )));
    }
    for (i, o) in tokens[..split].iter().enumerate() {
        let letter = o[1..].chars().next().unwrap_or(' ');
        if VALUED.contains(letter) && o.len() == 2 {
            if let Some(next) = tokens.get(i + 1).filter(|t| !is_switch(t)) {
                return Err(ImportError::Read(format!(
                    "the DiskSpd command line, argument {}: `{o} {next}`: DiskSpd takes an option's value attached to it (write {o}{next}); apart, `{next}` would be a target",
                    i + 1
                )));
            }
        }
    }
    Ok((tokens, split))
}

/// Reads a DiskSpd command line into a time span (its options) with its targets.
pub(super) fn read(line: &str, out: &mut Out) -> Result<Span, ImportError> {
    let (tokens, split) = arguments(line)?;
    let (options, targets) = tokens.split_at(split);
    if targets.is_empty() {
        return Err(ImportError::Read(
            "the DiskSpd command line names no target; its targets come last: a file path, #N (a physical disk) or E: (a drive), e.g. -b4K -d10 -c1G test.dat".into(),
        ));
    }
    let mut r = Reader {
        out,
        p: Params::default(),
        span: Span::new("command line".into(), options.join(" "), false),
        block: None,
        threads: None,
        burst: None,
        think: None,
        rate: None,
        affinity: false,
        no_affinity: false,
        stride: None,
        cache: Cache::default(),
        buffer_given: false,
        abs: None,
    };
    // The block size first: other sizes may count in blocks of it (`8b`).
    for (i, o) in options.iter().enumerate() {
        if let Some(v) = o[1..].strip_prefix('b').filter(|v| !v.is_empty()) {
            match size(v, None) {
                Some(b) if b > 0 && b <= u64::from(u32::MAX) => r.block = Some(b),
                _ => r.bad(i, o, "a block size in bytes (K, M, G suffixes), above 0"),
            }
        }
    }
    r.p.block = r.block.unwrap_or(r.p.block);
    for (i, o) in options.iter().enumerate() {
        r.option(i, o);
    }
    r.finish(options);
    for (i, t) in targets.iter().enumerate() {
        r.span.targets.push(Target {
            at: format!("command line, argument {}", split + i + 1),
            name: t.clone(),
            params: r.p.clone(),
            weight: None,
            threads: Vec::new(),
        });
    }
    Ok(r.span)
}

/// `-S` flags, `-h`: DiskSpd's caching.
#[derive(Default)]
struct Cache {
    cached: Option<usize>,
    uncached: Option<usize>,
    write_through: bool,
}

struct Reader<'a> {
    out: &'a mut Out,
    p: Params,
    span: Span,
    block: Option<u64>,
    /// `-t`, and where.
    threads: Option<usize>,
    burst: Option<(usize, u64)>,
    think: Option<(usize, u64)>,
    rate: Option<(usize, f64)>,
    affinity: bool,
    no_affinity: bool,
    stride: Option<(usize, u64)>,
    cache: Cache,
    /// `-Z...` given.
    buffer_given: bool,
    /// `-rdabs`: where it was, its (IO%, bytes) pairs.
    abs: Option<(usize, Vec<(f64, u64)>)>,
}

impl Reader<'_> {
    fn bad(&mut self, i: usize, o: &str, why: &str) {
        self.out
            .bad(&format!("command line, argument {}", i + 1), o, why);
    }

    fn no_effect(&mut self, o: &str, why: &str) {
        let key = o.get(..2).unwrap_or(o);
        self.out.note(format!("{key}: no effect ({why})"));
    }

    /// A count in `1..=max`, or the option listed.
    fn count(&mut self, i: usize, o: &str, v: &str, max: u32, what: &str) -> Option<u32> {
        match v.parse::<u32>() {
            Ok(n) if n >= 1 && n <= max => Some(n),
            _ => {
                self.bad(i, o, &format!("{what}: a whole number, 1 to {max}"));
                None
            }
        }
    }

    /// Whole seconds.
    fn seconds(&mut self, i: usize, o: &str, v: &str) -> Option<u64> {
        match v.parse::<u64>() {
            Ok(n) if n <= 365 * 86400 => Some(n),
            _ => {
                self.bad(i, o, "whole seconds (DiskSpd's unit), at most a year");
                None
            }
        }
    }

    fn size(&mut self, i: usize, o: &str, v: &str) -> Option<u64> {
        let s = size(v, self.block.or(Some(self.p.block)));
        if s.is_none() {
            self.bad(
                i,
                o,
                "a size: whole bytes, or with K, M, G, T (KiB to TiB) or b (blocks of -b)",
            );
        }
        s
    }

    #[allow(clippy::too_many_lines)]
    fn option(&mut self, i: usize, o: &str) {
        let body = &o[1..];
        let Some(letter) = body.chars().next() else {
            return self.bad(i, o, "an option letter after the `-`");
        };
        let v = &body[letter.len_utf8()..];
        if VALUED.contains(letter) && v.is_empty() {
            return self.bad(i, o, "needs a value, attached to its letter (e.g. -d60)");
        }
        match letter {
            'b' => {}
            '?' => self.bad(i, o, "shows DiskSpd's usage; there is nothing to run"),
            ':' => self.no_effect(o, "DiskSpd's experimental flags; storlab paces rates in its own way"),
            'a' => self.affinity(i, o, v),
            'n' => self.no_affinity = true,
            'B' => {
                let (base, len) = v.split_once(':').map_or((v, None), |(b, l)| (b, Some(l)));
                if let Some(b) = self.size(i, o, base) {
                    self.p.base = b;
                }
                if let Some(l) = len {
                    self.p.length = self.size(i, o, l).filter(|l| *l > 0);
                }
            }
            'c' => self.p.size = self.size(i, o, v).filter(|s| *s > 0),
            'f' if v.starts_with(|c: char| c.is_ascii_digit()) => {
                self.p.max = self.size(i, o, v);
            }
            'f' if v.chars().all(|c| "rst".contains(c)) => self.no_effect(
                o,
                "Windows' access hints (random, sequential, temporary); Linux has no open flag for them",
            ),
            'f' => self.bad(i, o, "a maximum offset (-f1G) or access hints r, s, t"),
            'd' => {
                if let Some(s) = self.seconds(i, o, v) {
                    if s == 0 {
                        self.bad(i, o, "storlab runs for a time: give at least -d1");
                    } else {
                        self.span.duration = s;
                    }
                }
            }
            'W' => {
                if let Some(s) = self.seconds(i, o, v) {
                    self.span.warmup = s;
                }
            }
            'C' => {
                if let Some(s) = self.seconds(i, o, v) {
                    self.span.cooldown = s;
                }
            }
            // Bare: DiskSpd's default interval, 1 s.
            'D' if v.is_empty() => self.span.interval_ms = Some(1000),
            'D' => match v.parse::<u64>() {
                Ok(ms) if (1..=86_400_000).contains(&ms) => self.span.interval_ms = Some(ms),
                _ => self.bad(i, o, "milliseconds, 1 or more"),
            },
            'F' => self.span.total_threads = self.count(i, o, v, MAX_THREADS, "threads"),
            't' => {
                if let Some(n) = self.count(i, o, v, MAX_THREADS, "threads per target") {
                    self.p.threads = n;
                    self.threads = Some(i);
                }
            }
            'o' => {
                if let Some(n) = self.count(i, o, v, MAX_REQUESTS, "outstanding I/Os") {
                    self.p.requests = n;
                }
            }
            'O' => self.span.thread_requests = self.count(i, o, v, MAX_REQUESTS, "outstanding I/Os"),
            'g' => {
                let (num, iops) = v.strip_suffix('i').map_or((v, false), |n| (n, true));
                match num.parse::<u64>() {
                    Ok(n) if n > 0 => {
                        let per_s = if iops {
                            n as f64
                        } else {
                            n as f64 * 1000.0 / self.p.block as f64
                        };
                        if per_s > MAX_RATE {
                            self.bad(i, o, "a rate of at most 10^9 I/Os a second per thread (storlab's most; -g is bytes per millisecond, or I/Os a second with an i)");
                        } else {
                            self.rate = Some((i, per_s));
                        }
                    }
                    _ => self.bad(i, o, "a rate above 0: bytes per millisecond, or I/Os a second with an i (-g100i)"),
                }
            }
            'i' => match v.parse::<u64>() {
                Ok(n) => self.burst = Some((i, n)),
                Err(_) => self.bad(i, o, "a count of I/Os"),
            },
            'j' => match v.parse::<u64>() {
                Ok(n) if n <= 3_600_000 => self.think = Some((i, n)),
                _ => self.bad(i, o, "milliseconds, at most an hour"),
            },
            'h' => {
                self.cache.uncached = Some(i);
                self.cache.write_through = true;
            }
            'S' => self.caching(i, o, v),
            'I' if v == "3" => self.no_effect(o, "normal priority, storlab's"),
            'I' => self.bad(i, o, "storlab issues I/O at normal priority"),
            'l' => self.no_effect(o, "large pages for buffers: storlab's buffers are its own"),
            'L' => self.no_effect(o, "storlab measures every I/O's latency always"),
            'N' => self.bad(i, o, "memory-mapped I/O: storlab reads and writes through the kernel's I/O path"),
            'p' => self.bad(i, o, "parallel I/Os at one sequential offset: storlab's threads each have their own sequential position"),
            'P' => self.no_effect(o, "a progress dot; storlab shows its own progress"),
            'r' => self.random(i, o, v),
            'R' if v.starts_with('p') => self.bad(i, o, "checks the profile without running it: see the converted job with storlab import or --dry-run"),
            'R' => self.no_effect(o, "DiskSpd's output format; storlab writes its results file and reports"),
            's' => {
                let (inter, stride) = v.strip_prefix('i').map_or((false, v), |s| (true, s));
                self.p.interlocked = inter;
                if !stride.is_empty() {
                    if let Some(s) = self.size(i, o, stride) {
                        self.stride = Some((i, s));
                    }
                }
            }
            'T' => {
                if let Some(t) = self.size(i, o, v) {
                    self.p.thread_stride = t;
                }
            }
            'v' => self.no_effect(o, "verbose output"),
            'w' => match v.parse::<f64>() {
                Ok(w) if (0.0..=100.0).contains(&w) => self.p.write = w,
                _ if v.is_empty() => self.p.write = 0.0,
                _ => self.bad(i, o, "a write percentage, 0 to 100"),
            },
            'x' => self.no_effect(o, "completion routines: storlab completes I/O through io_uring"),
            'y' => self.bad(i, o, "synchronisation with Windows events: storlab runs on its own"),
            'e' => self.no_effect(o, "event tracing for Windows"),
            'z' if v.is_empty() => self.out.note(format!("{o}: a seed from the clock in DiskSpd; storlab uses its fixed default seed (give -zN for a seed)")),
            'z' => match v.parse::<u64>() {
                Ok(s) => self.span.seed = Some(s),
                Err(_) => self.bad(i, o, "a seed: a whole number"),
            },
            'Z' => self.zero(i, o, v),
            _ => self.bad(i, o, "not a DiskSpd option storlab converts"),
        }
    }

    fn affinity(&mut self, i: usize, o: &str, v: &str) {
        if v == "g" {
            return;
        }
        let mut group = 0;
        let mut cpus = self.span.cpus.take().unwrap_or_default();
        for part in v.split(',') {
            if let Some(g) = part.strip_prefix('g') {
                match g.parse::<u32>() {
                    Ok(g) => group = g,
                    Err(_) => return self.bad(i, o, "CPUs: -a0,1,2 or -ag0,0,1,2"),
                }
                continue;
            }
            match part.parse::<usize>() {
                Ok(c) if group == 0 && c < 4096 && cpus.len() < 4096 => cpus.push(c),
                Ok(_) if group != 0 => {
                    return self.bad(
                        i,
                        o,
                        "processor groups above 0 are Windows'; Linux numbers every CPU in one list",
                    );
                }
                _ => return self.bad(i, o, "CPUs: numbers below 4096, -a0,1,2"),
            }
        }
        self.affinity = true;
        self.span.cpus_at = "command line".into();
        self.span.cpus = Some(cpus).filter(|c| !c.is_empty());
    }

    fn caching(&mut self, i: usize, o: &str, v: &str) {
        let flags = if v.is_empty() { "u" } else { v };
        for f in flags.chars() {
            match f {
                'b' => self.cache.cached = Some(i),
                'u' => self.cache.uncached = Some(i),
                'w' => self.cache.write_through = true,
                'h' => {
                    self.cache.uncached = Some(i);
                    self.cache.write_through = true;
                }
                'm' => self.bad(i, o, "memory-mapped I/O: storlab reads and writes through the kernel's I/O path"),
                'r' => self.bad(i, o, "remote file systems' caching: storlab's choice is the page cache or O_DIRECT (-Su)"),
                _ => self.bad(i, o, "caching flags are b, h, m, r, u, w"),
            }
        }
    }

    fn random(&mut self, i: usize, o: &str, v: &str) {
        if let Some(pct) = v.strip_prefix('s') {
            match pct.parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => self.p.random = Some(p),
                _ => self.bad(i, o, "a random percentage above 0, up to 100"),
            }
        } else if let Some(d) = v.strip_prefix("dpct") {
            match zones(d) {
                Some(z) => {
                    self.p.zones = Some(z);
                    self.p.random.get_or_insert(100.0);
                }
                None => self.bad(i, o, "IO%/TARGET% pairs separated by `:`, each share adding up to at most 100 (-rdpct90/10:10/90)"),
            }
        } else if let Some(d) = v.strip_prefix("dabs") {
            let mut pairs = Vec::new();
            for part in d.split(':') {
                let parsed = part.split_once('/').and_then(|(io, len)| {
                    Some((
                        io.trim().parse::<f64>().ok()?,
                        size(len, Some(self.p.block))?,
                    ))
                });
                match parsed {
                    Some((io, len)) if (0.0..=100.0).contains(&io) && pairs.len() < 100 => {
                        pairs.push((io, len));
                    }
                    _ => {
                        return self.bad(
                            i,
                            o,
                            "IO%/SIZE pairs separated by `:` (-rdabs90/10G:10/20G)",
                        );
                    }
                }
            }
            self.abs = Some((i, pairs));
            self.p.random.get_or_insert(100.0);
        } else if v.starts_with('d') {
            self.bad(
                i,
                o,
                "a distribution is -rdpct (shares of the target) or -rdabs (sizes)",
            );
        } else {
            self.p.random.get_or_insert(100.0);
            if !v.is_empty() {
                self.p.align = self.size(i, o, v).filter(|a| *a > 0);
            }
        }
    }

    /// `-rdabs` as shares of the span, which its size (`-c`, or `-f`) gives: each range's
    /// bytes as DiskSpd places them (a last range of 0 is the rest), ranges past the span's
    /// end dropped and the I/O of those within it scaled to 100 %, as DiskSpd truncates a
    /// distribution larger than its target.
    fn absolute_zones(&mut self, (i, pairs): &(usize, Vec<(f64, u64)>)) {
        let o = format!("-rdabs (argument {})", i + 1);
        let Some(span) = self
            .p
            .max
            .or(self.p.size)
            .map(|end| end.saturating_sub(self.p.base))
        else {
            return self.bad(*i, &o, "absolute zones need the target's size: give -c<size> (or -f<max>), or write the zones as shares with -rdpct");
        };
        let mut placed = Vec::new();
        let mut at = 0u64;
        let last = pairs.len().saturating_sub(1);
        for (k, &(io, len)) in pairs.iter().enumerate() {
            if at >= span {
                break;
            }
            let len = if len == 0 && k == last {
                span - at
            } else {
                len.min(span - at)
            };
            placed.push((io, len as f64 * 100.0 / span as f64));
            at += len;
        }
        let io: f64 = placed.iter().map(|p| p.0).sum();
        let rest = 100.0 - at as f64 * 100.0 / span as f64;
        if io <= 0.0 {
            return self.bad(*i, &o, "no I/O falls within the target");
        }
        // The rest of the target, past the ranges: DiskSpd puts what IO% is left there.
        if rest > 1e-9 && io < 100.0 - 1e-9 {
            placed.push((100.0 - io, rest));
        } else {
            for p in &mut placed {
                p.0 *= 100.0 / io;
            }
            if rest > 1e-9 {
                placed.push((0.0, rest));
            }
        }
        match zoned(&placed) {
            Some(z) => self.p.zones = Some(z),
            None => self.bad(*i, &o, "ranges whose I/O shares add up to at most 100 %"),
        }
    }

    fn zero(&mut self, i: usize, o: &str, v: &str) {
        self.buffer_given = true;
        if v == "r" {
            return;
        }
        if v.is_empty() {
            return self.bad(i, o, ZERO_WHY);
        }
        if let Some((size, file)) = v.split_once(',') {
            // -Z<size>,<file>: the buffer filled from the file (measured when the job is made).
            match self.size(i, o, size) {
                Some(s) if s > 0 && !file.is_empty() => self.p.source = Some((s, file.to_string())),
                Some(_) => self.bad(
                    i,
                    o,
                    "a buffer size above 0 and a file after the comma: -Z<size>,<file>",
                ),
                None => {}
            }
            return;
        }
        if self.size(i, o, v).is_some() {
            random_buffer_note(self.out, o);
        }
    }

    /// What the options say together: caching, threads, pace, stride.
    fn finish(&mut self, options: &[String]) {
        match (self.cache.cached, self.cache.uncached) {
            (Some(i), Some(_)) => {
                let o = options[i].clone();
                self.bad(i, &o, "caching both on (b) and off (u, h)");
            }
            (_, Some(_)) => self.p.uncached = true,
            _ => {}
        }
        self.p.write_through = self.cache.write_through;
        if let (Some(i), Some(_)) = (self.threads, self.span.total_threads) {
            let o = options[i].clone();
            self.bad(
                i,
                &o,
                "-t (threads per target) and -F (threads in all) conflict",
            );
        }
        if self.span.thread_requests.is_some() && self.span.total_threads.is_none() {
            self.out.bad(
                "command line",
                "-O",
                "outstanding I/Os per thread go with -F",
            );
        }
        if self.no_affinity {
            self.span.cpus = None;
        } else if !self.affinity {
            self.out.note("DiskSpd pins its threads to the CPUs in turn by default; storlab leaves them to the scheduler (name CPUs with -a to pin them)".into());
        }
        if let Some((i, s)) = self.stride {
            if s == 0 || s % 512 != 0 && s != self.p.block {
                let o = options[i].clone();
                self.bad(
                    i,
                    &o,
                    "a stride of whole 512-byte sectors (O_DIRECT's alignment), above 0",
                );
            } else {
                self.p.stride = Some(s);
            }
        }
        if self.p.thread_stride > 0 {
            let stride = self.p.stride.unwrap_or(self.p.block);
            if self.p.thread_stride % 512 != 0 || stride % 512 != 0 {
                self.out.bad("command line", "-T", "threads' streams that start off a 512-byte sector (-T and -s not multiples of 512 bytes, O_DIRECT's alignment); give -T and -s in sectors or blocks (e.g. -T1b -s8b)");
            } else if self.p.random.is_some() || self.p.interlocked {
                self.out.note(
                    "-T: no effect (DiskSpd staggers only sequential, non-interlocked threads)"
                        .into(),
                );
                self.p.thread_stride = 0;
            }
        }
        if let Some(abs) = self.abs.take() {
            self.absolute_zones(&abs);
        }
        self.p.rate_iops = self.rate.map(|(_, r)| r);
        if let Some((i, ms)) = self.think {
            let threads = self.span.total_threads.unwrap_or(self.p.threads);
            let burst = self.burst.map_or(0, |(_, b)| b / u64::from(threads));
            let o = options[i].clone();
            if self.rate.is_some() {
                self.out.note(format!(
                    "{o}: no effect (DiskSpd ignores its think time when -g limits the rate)"
                ));
            } else if burst > 1 {
                let (bi, _) = self.burst.unwrap_or((i, 0));
                let b = options[bi].clone();
                self.bad(bi, &b, "storlab thinks after every I/O; bursts of several I/Os (per thread) are not converted");
            } else {
                self.p.think_ms = Some(ms).filter(|ms| *ms > 0);
            }
        } else if let Some((i, _)) = self.burst {
            let o = options[i].clone();
            self.no_effect(&o, "a burst size without a think time, -j");
        }
        if self.p.write == 0.0 && self.cache.write_through {
            self.out
                .note("-Sw: no effect on a test without writes (-w0)".into());
        }
        if self.p.write > 0.0 && !self.buffer_given {
            write_buffer_note(
                self.out,
                "writes without -Z (DiskSpd's pattern 0, 1, ..., 255)",
            );
        }
    }
}

/// DiskSpd's `-rdpct` (`IO%/TARGET%:...`; what they leave of 100 % goes to the rest of the
/// target) as storlab's `zoned:IO/SPAN:...`.
pub(super) fn zones(v: &str) -> Option<String> {
    let mut pairs = Vec::new();
    for part in v.split(':') {
        let (io, span) = part.split_once('/')?;
        let io: f64 = io.trim().parse().ok()?;
        let span: f64 = span.trim().parse().ok()?;
        if !(0.0..=100.0).contains(&io) || !(0.0..=100.0).contains(&span) || pairs.len() > 100 {
            return None;
        }
        pairs.push((io, span));
    }
    zoned(&pairs)
}

/// (IO%, span%) pairs, the rest of both added as a last zone, as `zoned:...`.
pub(super) fn zoned(pairs: &[(f64, f64)]) -> Option<String> {
    let io: f64 = pairs.iter().map(|p| p.0).sum();
    let span: f64 = pairs.iter().map(|p| p.1).sum();
    if pairs.is_empty() || io > 100.0 + 1e-9 || span > 100.0 + 1e-9 {
        return None;
    }
    let mut all = pairs.to_vec();
    if 100.0 - span > 1e-9 {
        all.push((100.0 - io, 100.0 - span));
    } else if 100.0 - io > 1e-9 {
        return None;
    }
    if all.iter().any(|(io, span)| *io > 0.0 && *span <= 0.0) {
        return None;
    }
    let parts: Vec<String> = all.iter().map(|(i, s)| format!("{i}/{s}")).collect();
    Some(format!("zoned:{}", parts.join(":")))
}
