//! A DiskSpd XML profile (`<Profile>`, its `<TimeSpans>` and their `<Targets>`, as DiskSpd's
//! `-Rxml` writes one and its schema describes it) read into [`Span`]s: every element is
//! converted, noted as having no effect, or listed as unsupported with its line.

use super::args::zoned;
use super::{
    Given, MAX_REQUESTS, MAX_SPANS, MAX_THREADS, Out, Params, Span, Target, ZERO_WHY,
    random_buffer_note, write_buffer_note,
};
use crate::import::ImportError;
use roxmltree::{Document, Node, ParsingOptions};

/// Elements and attributes a profile may hold in all (16 MiB of XML holds fewer than this
/// unless it is made of empty elements).
const MAX_NODES: u32 = 1 << 20;

/// How deep elements may nest (DiskSpd's profiles nest 8 deep; the parser recurses once a
/// level, so a document of thousands of levels would exhaust a thread's stack).
const MAX_DEPTH: usize = 64;

/// Attributes one element may hold (DiskSpd's hold at most two, `<Range IO="..">` and
/// `<Throughput unit="..">`; the parser checks each new attribute against the element's others,
/// so an element of 150 000 attributes took 34 s: refused before parsing).
const MAX_ATTRIBUTES: usize = 64;

/// What keeps the parse linear, checked in one pass over `text`'s tags (skipping comments,
/// CDATA, processing instructions, declarations and quoted attribute values): elements nest at
/// most [`MAX_DEPTH`] deep and each holds at most [`MAX_ATTRIBUTES`] attributes. The error
/// names the line of the first tag beyond either.
fn shape(text: &str) -> Result<(), String> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    let line = |at: usize| b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let skip_to = |from: usize, end: &str| {
        text[from..]
            .find(end)
            .map_or(b.len(), |e| from + e + end.len())
    };
    while let Some(lt) = text[i..].find('<').map(|p| i + p) {
        let rest = &text[lt..];
        i = if rest.starts_with("<!--") {
            skip_to(lt, "-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_to(lt, "]]>")
        } else if rest.starts_with("<?") {
            skip_to(lt, "?>")
        } else if rest.starts_with("<!") {
            skip_to(lt, ">")
        } else if rest.starts_with("</") {
            depth = depth.saturating_sub(1);
            skip_to(lt, ">")
        } else {
            let mut j = lt + 1;
            let mut quote = None;
            let mut attributes = 0usize;
            while j < b.len() {
                match (quote, b[j]) {
                    (None, q @ (b'"' | b'\'')) => quote = Some(q),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'=') => attributes += 1,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            if attributes > MAX_ATTRIBUTES {
                return Err(format!(
                    "{}: an element with {attributes} attributes; a DiskSpd profile's elements hold at most 2 (storlab reads at most {MAX_ATTRIBUTES})",
                    line(lt)
                ));
            }
            if j > lt && b.get(j.wrapping_sub(1)) != Some(&b'/') {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!(
                        "{}: its elements nest more than {MAX_DEPTH} deep; a DiskSpd profile's nest 8 deep",
                        line(lt)
                    ));
                }
            }
            j + 1
        };
        if i >= b.len() {
            break;
        }
    }
    Ok(())
}

/// A profile's elements, with the file for their positions.
struct Reader<'a> {
    file: &'a str,
    /// Where each `\n` of the text is.
    newlines: Vec<usize>,
    out: &'a mut Out,
    /// `<Target>`s read so far, in every time span.
    targets: usize,
    /// `<Target>`s without a `<Path>` so far: the k-th is the template path `*k`.
    pathless: usize,
    /// Where a `<Path>` of a template (`*1`) was written, if one was.
    template_at: Option<String>,
    /// What a command line that runs the profile (`-X`) gives it.
    given: &'a Given,
    /// Which of the command line's targets took a template's place.
    used: Vec<bool>,
}

fn elements<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(Node::is_element)
}

impl Reader<'_> {
    /// `file:line` of `n` (found among the lines' starts: the parser's own position search
    /// reads the text from its start each time).
    fn at(&self, n: Node<'_, '_>) -> String {
        let line = self.newlines.partition_point(|&p| p < n.range().start) + 1;
        format!("{}:{line}", self.file)
    }

    fn text<'n>(n: Node<'n, '_>) -> &'n str {
        n.text().unwrap_or("").trim()
    }

    fn option(n: Node<'_, '_>) -> String {
        let name = n.tag_name().name();
        match n.text().map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) if elements(n).next().is_none() => format!("<{name}>{t}</{name}>"),
            _ => format!("<{name}>"),
        }
    }

    fn bad(&mut self, n: Node<'_, '_>, why: &str) {
        let at = self.at(n);
        self.out.bad(&at, &Self::option(n), why);
    }

    fn no_effect(&mut self, n: Node<'_, '_>, why: &str) {
        self.out
            .note(format!("<{}>: no effect ({why})", n.tag_name().name()));
    }

    /// A whole number in `range`, or the element listed (`what` says what it should be).
    fn number(
        &mut self,
        n: Node<'_, '_>,
        range: std::ops::RangeInclusive<u64>,
        what: &str,
    ) -> Option<u64> {
        match Self::text(n).parse::<u64>() {
            Ok(v) if range.contains(&v) => Some(v),
            _ => {
                self.bad(n, &format!("{what}: a whole number, {range:?}"));
                None
            }
        }
    }

    fn flag(&mut self, n: Node<'_, '_>) -> bool {
        match Self::text(n) {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => {
                self.bad(n, "true or false");
                false
            }
        }
    }

    fn span(&mut self, n: Node<'_, '_>) -> Span {
        let mut span = Span::new(
            self.at(n),
            "<TimeSpan>: Duration, Warmup, Cooldown, RandSeed, caching".into(),
            true,
        );
        let mut affinity = false;
        for e in elements(n) {
            match e.tag_name().name() {
                "Duration" if self.given.duration.is_some() => {}
                "Warmup" if self.given.warmup.is_some() => {}
                "Cooldown" if self.given.cooldown.is_some() => {}
                "RandSeed" if self.given.seed.is_some() => {}
                "Duration" | "Warmup" | "Cooldown" if Self::text(e).is_empty() => {
                    // A template's (VM Fleet's): its tool fills it in before DiskSpd runs it.
                    let (default, flag) = match e.tag_name().name() {
                        "Duration" => ("10 s", "--duration"),
                        "Warmup" => ("5 s", "--ramp"),
                        _ => ("0 s", "--cooldown"),
                    };
                    let give = format!("; give {flag} to storlab run for another");
                    self.out.note(format!(
                        "<{}> is empty, as in a template its tool completes: DiskSpd's default, {default}{give}",
                        e.tag_name().name()
                    ));
                }
                "Duration" => {
                    if let Some(d) = self.number(e, 1..=31_536_000, "seconds") {
                        span.duration = d;
                    }
                }
                "Warmup" => {
                    if let Some(d) = self.number(e, 0..=31_536_000, "seconds") {
                        span.warmup = d;
                    }
                }
                "Cooldown" => {
                    if let Some(c) = self.number(e, 0..=31_536_000, "seconds") {
                        span.cooldown = c;
                    }
                }
                "RandSeed" => span.seed = self.number(e, 0..=u64::MAX, "a seed"),
                "RandomWriteData" => {
                    let _ = self.flag(e);
                }
                "ThreadCount" => {
                    span.total_threads = self
                        .number(e, 0..=u64::from(MAX_THREADS), "threads")
                        .filter(|t| *t > 0)
                        .map(|t| t as u32);
                }
                "RequestCount" => {
                    span.thread_requests = self
                        .number(e, 0..=u64::from(MAX_REQUESTS), "outstanding I/Os")
                        .filter(|t| *t > 0)
                        .map(|t| t as u32);
                }
                "GroupAffinity" => {
                    let _ = self.flag(e);
                }
                "Affinity" => {
                    affinity = true;
                    span.cpus_at = self.at(e);
                    span.cpus = self.cpus(e);
                }
                "DisableAffinity" => {
                    if self.flag(e) {
                        affinity = true;
                        span.cpus = None;
                    }
                }
                "CompletionRoutines" => self.no_effect(
                    e,
                    "completion routines: storlab completes I/O through io_uring",
                ),
                "MeasureLatency" => {
                    self.no_effect(e, "storlab measures every I/O's latency always")
                }
                "CalculateIopsStdDev" => {
                    self.no_effect(e, "storlab keeps a time series of every interval")
                }
                "IoBucketDuration" => {
                    span.interval_ms = self.number(e, 1..=86_400_000, "milliseconds")
                }
                "Targets" => {
                    for t in elements(e) {
                        if t.tag_name().name() != "Target" {
                            self.bad(t, "<Targets> holds <Target> elements");
                            continue;
                        }
                        // Each target makes a worker at least: no more than storlab runs.
                        self.targets += 1;
                        if self.targets > crate::job::MAX_WORKERS {
                            let max = crate::job::MAX_WORKERS;
                            self.bad(t, &format!("more than {max} targets in all time spans; each makes a worker at least, and storlab runs at most {max} workers"));
                            break;
                        }
                        if let Some(target) = self.target(t, &span) {
                            span.targets.push(target);
                        }
                    }
                }
                _ => self.bad(e, "not an element of a DiskSpd time span storlab converts"),
            }
        }
        if !affinity {
            self.out.note("DiskSpd pins its threads to the CPUs in turn by default; storlab leaves them to the scheduler (name CPUs with <Affinity> to pin them)".into());
        }
        if span.thread_requests.is_some() && span.total_threads.is_none() {
            let at = span.at.clone();
            self.out.bad(
                &at,
                "<RequestCount> of a <TimeSpan>",
                "outstanding I/Os per thread go with <ThreadCount>",
            );
        }
        // A command line's -d, -W, -C and -z set every time span's, as DiskSpd sets them.
        let g = self.given;
        span.duration = g.duration.unwrap_or(span.duration);
        span.warmup = g.warmup.unwrap_or(span.warmup);
        span.cooldown = g.cooldown.unwrap_or(span.cooldown);
        span.seed = g.seed.or(span.seed);
        self.weights(&span);
        if span.targets.is_empty() {
            let at = span.at.clone();
            self.out
                .bad(&at, "<TimeSpan>", "names no target: it runs nothing");
        }
        span
    }

    /// The targets' `<Weight>` and `<ThreadTargets>`, as DiskSpd reads them: with the span's
    /// `ThreadCount` and `RequestCount` a weight is at least 1 and a thread one of the
    /// span's; without them a weight has no effect and threads chosen for a target are an
    /// error.
    fn weights(&mut self, span: &Span) {
        let pool = span
            .total_threads
            .filter(|_| span.thread_requests.is_some());
        for tg in &span.targets {
            match pool {
                None => {
                    if tg.weight.is_some() {
                        self.out.note(format!("{}: <Weight> has no effect (DiskSpd weighs the targets only with a time span's <ThreadCount> and <RequestCount>)", tg.at));
                    }
                    if !tg.threads.is_empty() {
                        self.out.bad(&tg.at, "<ThreadTargets>", "threads chosen for a target go with a time span's <ThreadCount> and <RequestCount> (DiskSpd refuses them otherwise)");
                    }
                }
                Some(threads) => {
                    if tg.weight == Some(0) {
                        self.out.bad(
                            &tg.at,
                            "<Weight>0</Weight>",
                            "a weight of at least 1 (DiskSpd refuses 0)",
                        );
                    }
                    if let Some(&(t, _)) = tg.threads.iter().find(|t| t.0 >= threads) {
                        let why = format!(
                            "thread {t}: the time span's <ThreadCount> is {threads}, its threads numbered from 0"
                        );
                        self.out.bad(&tg.at, "<ThreadTargets>", &why);
                    }
                }
            }
        }
    }

    fn cpus(&mut self, n: Node<'_, '_>) -> Option<Vec<usize>> {
        let mut cpus = Vec::new();
        for e in elements(n) {
            let cpu = match e.tag_name().name() {
                "AffinityAssignment" => Self::text(e).parse::<usize>().ok(),
                "AffinityGroupAssignment" => {
                    if e.attribute("Group").is_some_and(|g| g.trim() != "0") {
                        self.bad(e, "processor groups above 0 are Windows'; Linux numbers every CPU in one list");
                        continue;
                    }
                    e.attribute("Processor")
                        .and_then(|p| p.trim().parse::<usize>().ok())
                }
                _ => {
                    self.bad(
                        e,
                        "<Affinity> holds <AffinityAssignment> or <AffinityGroupAssignment>",
                    );
                    continue;
                }
            };
            match cpu {
                Some(c) if c < 4096 && cpus.len() < 4096 => cpus.push(c),
                _ => self.bad(e, "a CPU number below 4096"),
            }
        }
        Some(cpus).filter(|c| !c.is_empty())
    }

    #[allow(clippy::too_many_lines)]
    fn target(&mut self, n: Node<'_, '_>, span: &Span) -> Option<Target> {
        let mut p = Params::default();
        let mut name = None;
        let mut throughput: Option<(Node<'_, '_>, f64, bool)> = None;
        let mut think = None;
        let mut burst = None;
        let mut buffer = false;
        let mut stride = None;
        let mut random = None;
        let mut ratio = None;
        let mut weight = None;
        let mut thread_targets = Vec::new();
        let bool_cache = |r: &mut Self, e, why: &str| {
            if r.flag(e) {
                r.bad(e, why);
            }
        };
        for e in elements(n) {
            match e.tag_name().name() {
                "Path" => name = Some(Self::text(e).to_string()).filter(|p| !p.is_empty()),
                "BlockSize" => {
                    if let Some(b) = self.number(e, 1..=u64::from(u32::MAX), "bytes") {
                        p.block = b;
                    }
                }
                "StrideSize" => stride = self.number(e, 0..=u64::MAX, "bytes").map(|s| (e, s)),
                "InterlockedSequential" => p.interlocked = self.flag(e),
                "BaseFileOffset" => p.base = self.number(e, 0..=u64::MAX, "bytes").unwrap_or(0),
                "SequentialScan" | "RandomAccess" | "TemporaryFile" => {
                    let _ = self.flag(e);
                    self.no_effect(e, "Windows' access hints; Linux has no open flag for them");
                }
                "UseLargePages" => {
                    self.no_effect(e, "large pages for buffers: storlab's buffers are its own")
                }
                "RequestCount" => {
                    if let Some(r) = self.number(e, 1..=u64::from(MAX_REQUESTS), "outstanding I/Os")
                    {
                        p.requests = r as u32;
                    }
                }
                "Random" => random = self.number(e, 0..=u64::MAX, "an alignment in bytes"),
                "RandomRatio" => ratio = self.number(e, 1..=100, "a percentage"),
                "DisableAllCache" => {
                    if self.flag(e) {
                        p.uncached = true;
                        p.write_through = true;
                    }
                }
                "DisableOSCache" => p.uncached |= self.flag(e),
                "WriteThrough" => p.write_through |= self.flag(e),
                "DisableLocalCache" => bool_cache(
                    self,
                    e,
                    "remote file systems' caching: storlab's choice is the page cache or O_DIRECT (<DisableOSCache>)",
                ),
                "MemoryMappedIo" => bool_cache(
                    self,
                    e,
                    "memory-mapped I/O: storlab reads and writes through the kernel's I/O path",
                ),
                "FlushType" => self.bad(
                    e,
                    "memory-mapped I/O: storlab reads and writes through the kernel's I/O path",
                ),
                "WriteBufferContent" => {
                    buffer = true;
                    p.source = self.buffer(e);
                }
                "BurstSize" => {
                    burst = self
                        .number(e, 0..=u64::from(u32::MAX), "I/Os")
                        .map(|b| (e, b))
                }
                "ThinkTime" => think = self.number(e, 0..=3_600_000, "milliseconds"),
                "Throughput" => {
                    let iops = match e.attribute("unit").unwrap_or("BPMS") {
                        "IOPS" => true,
                        "BPMS" => false,
                        _ => {
                            self.bad(e, "unit=\"BPMS\" (bytes per ms) or unit=\"IOPS\"");
                            continue;
                        }
                    };
                    if let Some(v) = self.number(e, 0..=u64::MAX, "a rate") {
                        throughput = Some((e, v as f64, iops)).filter(|_| v > 0);
                    }
                }
                "ThreadsPerFile" => {
                    if let Some(t) = self.number(e, 1..=u64::from(MAX_THREADS), "threads") {
                        p.threads = t as u32;
                    }
                }
                "FileSize" => p.size = self.number(e, 0..=u64::MAX, "bytes").filter(|s| *s > 0),
                "MaxFileSize" => p.max = self.number(e, 0..=u64::MAX, "bytes").filter(|s| *s > 0),
                "WriteRatio" => {
                    if let Some(w) = self.number(e, 0..=100, "a percentage") {
                        p.write = w as f64;
                    }
                }
                "ParallelAsyncIO" => bool_cache(
                    self,
                    e,
                    "parallel I/Os at one sequential offset: storlab's threads each have their own sequential position",
                ),
                "ThreadStride" => match self.number(e, 0..=u64::MAX, "bytes") {
                    Some(t) if t % 512 != 0 => {
                        self.bad(
                            e,
                            "a thread stride of whole 512-byte sectors (O_DIRECT's alignment)",
                        );
                    }
                    Some(t) => p.thread_stride = t,
                    None => {}
                },
                "IOPriority" => {
                    if self.number(e, 1..=3, "a priority").is_some_and(|p| p != 3) {
                        self.bad(e, "storlab issues I/O at normal priority (3)");
                    }
                }
                "Weight" => {
                    weight = Some(
                        self.number(e, 0..=u64::from(u32::MAX), "a weight")
                            .unwrap_or(1) as u32,
                    );
                }
                "ThreadTargets" => thread_targets = self.thread_targets(e),
                "Distribution" => p.zones = self.distribution(e),
                _ => self.bad(e, "not an element of a DiskSpd target storlab converts"),
            }
        }
        let name = match name {
            Some(name) if name.starts_with('*') && self.pathless > 0 => {
                self.bad(n, "a template path after a <Target> with no <Path> (itself the template *1): write each <Path>, or *N for each");
                return None;
            }
            Some(name) => {
                if name.starts_with('*') && self.template_at.is_none() {
                    self.template_at = Some(self.at(n));
                }
                name
            }
            // A template whose tool fills in the paths (StorScore writes one file per target,
            // numbered in the profile's order): the k-th such target is the template `*k`.
            None => {
                self.pathless += 1;
                let k = self.pathless;
                if let Some(at) = self.template_at.clone() {
                    self.bad(n, &format!("the <Target> names no <Path>, and the profile's other targets are template paths (*1 at {at}): write each <Path>, or *N for each"));
                    return None;
                }
                self.out.note(format!("{}: the <Target> names no <Path> (a template whose tool writes one file per target, as StorScore's): it is the template *{k}, placed with --map \"*{k}=PATH\"", self.at(n)));
                format!("*{k}")
            }
        };
        let name = self.substitute(name, n)?;
        if let Some(align) = random {
            p.random = Some(ratio.map_or(100.0, |r| r as f64));
            p.align = Some(align).filter(|a| *a > 0);
        } else if p.zones.is_some() {
            p.random = Some(ratio.map_or(100.0, |r| r as f64));
        }
        if let Some((e, s)) = stride {
            if p.random.is_none() && s > 0 && s != p.block {
                if s % 512 == 0 {
                    p.stride = Some(s);
                } else {
                    self.bad(
                        e,
                        "a stride of whole 512-byte sectors (O_DIRECT's alignment)",
                    );
                }
            }
        }
        if p.random.is_some() || p.interlocked {
            p.thread_stride = 0;
        }
        let step = p.stride.unwrap_or(p.block);
        if p.thread_stride % 512 != 0 || step % 512 != 0 {
            self.bad(n, "threads' streams that start off a 512-byte sector (ThreadStride and StrideSize not multiples of 512 bytes, O_DIRECT's alignment)");
            p.thread_stride = 0;
        }
        if let Some((e, v, iops)) = throughput {
            let rate = if iops { v } else { v * 1000.0 / p.block as f64 };
            if rate > super::args::MAX_RATE {
                self.bad(
                    e,
                    "a rate of at most 10^9 I/Os a second per thread (storlab's most)",
                );
            } else {
                p.rate_iops = Some(rate);
            }
            if think.is_some_and(|t| t > 0) {
                self.out.note(format!("{}: <ThinkTime> has no effect (DiskSpd ignores it when <Throughput> limits the rate)", self.at(e)));
            }
        } else if let Some(ms) = think.filter(|t| *t > 0) {
            let threads = span.total_threads.unwrap_or(p.threads);
            match burst {
                Some((e, b)) if b / u64::from(threads) > 1 => {
                    self.bad(e, "storlab thinks after every I/O; bursts of several I/Os (per thread) are not converted");
                }
                _ => p.think_ms = Some(ms),
            }
        }
        if p.write > 0.0 && !buffer {
            write_buffer_note(
                self.out,
                "writes without <WriteBufferContent> (DiskSpd's pattern 0, 1, ..., 255)",
            );
        }
        Some(Target {
            at: self.at(n),
            name,
            params: p,
            weight,
            threads: thread_targets,
        })
    }

    /// A template path `*N` replaced by the command line's N-th target, when the line that runs
    /// the profile names targets (as DiskSpd substitutes them); `None` when it cannot be.
    fn substitute(&mut self, name: String, n: Node<'_, '_>) -> Option<String> {
        let Some(digits) = name.strip_prefix('*') else {
            return Some(name);
        };
        if self.given.targets.is_empty() {
            return Some(name);
        }
        let k = digits
            .parse::<usize>()
            .ok()
            .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()));
        match k {
            Some(k) if k >= 1 && k <= self.given.targets.len() => {
                self.used[k - 1] = true;
                Some(self.given.targets[k - 1].0.clone())
            }
            Some(k) if k >= 1 => {
                let why = format!(
                    "the template path *{k} has no target on the command line (it names {}): give one for each template, in order",
                    self.given.targets.len()
                );
                self.bad(n, &why);
                None
            }
            _ => {
                self.bad(
                    n,
                    "a template path is * and a whole number from 1 (*1, *2, ...)",
                );
                None
            }
        }
    }

    /// `<ThreadTargets>`: the threads of the span's `ThreadCount` that use the target, each
    /// with its weight there (0: the target's `<Weight>`); checked against the span in
    /// [`Reader::weights`].
    fn thread_targets(&mut self, n: Node<'_, '_>) -> Vec<(u32, u32)> {
        let mut list: Vec<(u32, u32)> = Vec::new();
        for t in elements(n) {
            if t.tag_name().name() != "ThreadTarget" {
                self.bad(t, "<ThreadTargets> holds <ThreadTarget> elements");
                continue;
            }
            let (mut thread, mut weight) = (None, 0);
            for e in elements(t) {
                match e.tag_name().name() {
                    "Thread" => {
                        thread = self.number(e, 0..=u64::from(MAX_THREADS), "a thread, from 0");
                    }
                    "Weight" => {
                        weight = self
                            .number(e, 0..=u64::from(u32::MAX), "a weight")
                            .unwrap_or(0);
                    }
                    _ => self.bad(e, "<ThreadTarget> holds <Thread> and <Weight>"),
                }
            }
            match thread {
                Some(th) if list.iter().any(|l| u64::from(l.0) == th) => {
                    self.bad(t, "a thread named twice for one target");
                }
                Some(th) => list.push((th as u32, weight as u32)),
                None => self.bad(t, "<ThreadTarget> names its <Thread>"),
            }
        }
        list
    }

    /// `<WriteBufferContent>`: what DiskSpd writes; `Some` for a buffer filled from a file
    /// (`<RandomDataSource>` with `<SizeInBytes>` and `<FilePath>`).
    fn buffer(&mut self, n: Node<'_, '_>) -> Option<(u64, String)> {
        let mut source = None;
        for e in elements(n) {
            match (e.tag_name().name(), Self::text(e)) {
                ("Pattern", "random") => {}
                ("Pattern", "sequential") => {
                    write_buffer_note(self.out, "<Pattern>sequential</Pattern> (0, 1, ..., 255)")
                }
                ("Pattern", "zero") => self.bad(e, ZERO_WHY),
                ("RandomDataSource", _) => {
                    let child = |name: &str| elements(e).find(|f| f.tag_name().name() == name);
                    let file = child("FilePath").map(|f| Self::text(f).to_string());
                    match (child("SizeInBytes"), file.filter(|f| !f.is_empty())) {
                        (Some(s), Some(file)) => {
                            if let Some(size) = self.number(s, 1..=u64::MAX, "bytes") {
                                source = Some((size, file));
                            }
                        }
                        (None, Some(_)) => {
                            self.bad(e, "a <FilePath> goes with the buffer's <SizeInBytes>")
                        }
                        _ => random_buffer_note(self.out, "<RandomDataSource>"),
                    }
                }
                _ => self.bad(e, "<WriteBufferContent> holds <Pattern> (sequential, zero, random) and <RandomDataSource>"),
            }
        }
        source
    }

    fn distribution(&mut self, n: Node<'_, '_>) -> Option<String> {
        let mut zones = None;
        for e in elements(n) {
            if e.tag_name().name() != "Percent" {
                self.bad(e, "storlab's zones are shares of the target (<Percent>); absolute sizes are not converted");
                continue;
            }
            let mut pairs = Vec::new();
            for r in elements(e).take(101) {
                let io = r.attribute("IO").and_then(|v| v.trim().parse::<f64>().ok());
                let span = Self::text(r).parse::<f64>().ok();
                match (io, span) {
                    (Some(io), Some(span))
                        if (0.0..=100.0).contains(&io) && (0.0..=100.0).contains(&span) =>
                    {
                        pairs.push((io, span))
                    }
                    _ => self.bad(r, "<Range IO=\"PERCENT\">PERCENT</Range>"),
                }
            }
            zones = zoned(&pairs);
            if zones.is_none() {
                self.bad(
                    e,
                    "ranges whose I/O and target shares each add up to at most 100 %",
                );
            }
        }
        zones
    }
}

/// The time spans of the DiskSpd profile `text` (of `file`).
pub(super) fn read(
    file: &str,
    text: &str,
    out: &mut Out,
    given: &Given,
) -> Result<Vec<Span>, ImportError> {
    let opts = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
    };
    shape(text).map_err(|e| ImportError::Read(format!("{file}:{e}")))?;
    let doc = Document::parse_with_options(text, opts).map_err(|e| {
        ImportError::Read(format!("{file}: not an XML document storlab can read: {e}"))
    })?;
    let root = doc.root_element();
    if root.tag_name().name() != "Profile" {
        return Err(ImportError::Read(format!(
            "{file}: its root element is <{}>; a DiskSpd profile's is <Profile>",
            root.tag_name().name()
        )));
    }
    let mut r = Reader {
        file,
        newlines: text.match_indices('\n').map(|(i, _)| i).collect(),
        out,
        targets: 0,
        pathless: 0,
        template_at: None,
        given,
        used: vec![false; given.targets.len()],
    };
    let mut spans = Vec::new();
    for e in elements(root) {
        match e.tag_name().name() {
            "TimeSpans" => {
                for s in elements(e) {
                    if s.tag_name().name() != "TimeSpan" {
                        r.bad(s, "<TimeSpans> holds <TimeSpan> elements");
                        continue;
                    }
                    if spans.len() == MAX_SPANS {
                        return Err(ImportError::Read(format!(
                            "{}: more than {MAX_SPANS} time spans; storlab converts at most {MAX_SPANS}: split the profile",
                            r.at(s)
                        )));
                    }
                    spans.push(r.span(s));
                }
            }
            "Verbose" | "VerboseStats" | "Progress" | "ResultFormat" => r.no_effect(
                e,
                "DiskSpd's output; storlab writes its results file and reports",
            ),
            "ExperimentFlags" => r.no_effect(
                e,
                "DiskSpd's experimental flags; storlab paces rates in its own way",
            ),
            "ETW" => r.no_effect(e, "event tracing for Windows"),
            "PrecreateFiles" => {
                r.no_effect(e, "storlab creates and fills its files before the run")
            }
            _ => r.bad(e, "not an element of a DiskSpd profile storlab converts"),
        }
    }
    if spans.is_empty() {
        return Err(ImportError::Read(format!(
            "{file}: the profile has no <TimeSpans><TimeSpan>: DiskSpd runs nothing from it, and neither can storlab"
        )));
    }
    // Every target of the command line takes a template's place, as DiskSpd requires.
    for (k, (target, arg)) in given.targets.iter().enumerate() {
        if !r.used[k] {
            let why = format!(
                "no template path *{} in {file} for it to take the place of: give one target for each template path, in order",
                k + 1
            );
            r.out
                .bad(&format!("command line, argument {arg}"), target, &why);
        }
    }
    Ok(spans)
}
