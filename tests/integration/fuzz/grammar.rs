//! The job-file grammar the fuzzers draw from: the keys of each table, what kind of value
//! each takes, and for every kind good values, boundaries and garbage.

use proptest::sample::Index;

/// What a value is meant to be; a generated key gets a value of its kind, or (sometimes) any
/// value at all.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Size,
    Dur,
    Pct,
    Count,
    Int,
    Float,
    Bool,
    Text,
    Engine,
    Choice,
    Arrivals,
    Dist,
    OnError,
    StopWhen,
    Pattern,
    Path,
    Names,
    Cpus,
    Mix,
    CountCycle,
    SizeCycle,
    PctList,
    FloatList,
    Order,
    Version,
    Threads,
    Test,
    Paths,
}

/// Values by kind, as TOML source text: good ones, boundaries and garbage.
pub(super) fn pool(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Size => values::SIZE,
        Kind::Dur => values::DUR,
        Kind::Pct => values::PCT,
        Kind::Count => values::COUNT,
        Kind::Int => values::INT,
        Kind::Float => values::FLOAT,
        Kind::Bool => values::BOOL,
        Kind::Text => values::TEXT,
        Kind::Engine => values::ENGINE,
        Kind::Choice => values::CHOICE,
        Kind::Arrivals => values::ARRIVALS,
        Kind::Dist => values::DIST,
        Kind::OnError => values::ON_ERROR,
        Kind::StopWhen => values::STOP_WHEN,
        Kind::Pattern => values::PATTERN,
        Kind::Path => values::PATH,
        Kind::Names => values::NAMES,
        Kind::Cpus => values::CPUS,
        Kind::Mix => values::MIX,
        Kind::CountCycle => values::COUNT_CYCLE,
        Kind::SizeCycle => values::SIZE_CYCLE,
        Kind::PctList => values::PCT_LIST,
        Kind::FloatList => values::FLOAT_LIST,
        Kind::Order => values::ORDER,
        Kind::Version => values::VERSION,
        Kind::Threads => values::THREADS,
        Kind::Test => values::TEST,
        Kind::Paths => values::PATHS,
    }
}

/// The values of each kind, for [`pool`].
mod values {
    pub(super) const SIZE: &[&str] = &[
        r#""4k""#,
        r#""512""#,
        r#""0""#,
        r#""1""#,
        r#""-1""#,
        r#""4kk""#,
        r#""1e99GiB""#,
        r#""18446744073709551615""#,
        r#""99999999999P""#,
        r#""1.5k""#,
        r#""0.3""#,
        r#""""#,
        r#""k""#,
        r#""64MiB""#,
        r#""65MiB""#,
        r#""1GiB""#,
        r#""1TB""#,
        r#"" 8k ""#,
        r#""NaN""#,
        r#""inf""#,
        r#""1_0k""#,
        r#""µs""#,
        "4096",
        "-4096",
        "0",
        "1.5",
        "nan",
        "-inf",
        "9223372036854775807",
    ];

    pub(super) const DUR: &[&str] = &[
        r#""30s""#,
        r#""0""#,
        r#""0s""#,
        r#""-1s""#,
        r#""1e99s""#,
        r#""500ms""#,
        r#""1h30m""#,
        r#""1d""#,
        r#""nan""#,
        r#""inf""#,
        r#""10ms""#,
        r#""9ms""#,
        r#""1ns""#,
        r#""s""#,
        r#""1x""#,
        r#""1.5s""#,
        r#""999999999999s""#,
        r#""1µs""#,
        r#""..s""#,
        r#""""#,
        "5",
        "-5",
        "0.001",
        "1e300",
        "nan",
        "inf",
    ];

    pub(super) const PCT: &[&str] = &[
        r#""70%""#,
        r#""101%""#,
        r#""-1%""#,
        r#""100""#,
        r#""0""#,
        r#""nan""#,
        r#""abc""#,
        r#""50.5%""#,
        r#""%""#,
        r#""1e400%""#,
        "70",
        "150",
        "-3",
        "nan",
        "inf",
        "0.0",
    ];

    pub(super) const COUNT: &[&str] = &[
        "0",
        "1",
        "2",
        "8",
        "4096",
        "4097",
        "32768",
        "32769",
        "-1",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "1.5",
        r#""8""#,
    ];

    pub(super) const INT: &[&str] = &[
        "0",
        "1",
        "-1",
        "18446744073709551615",
        "9223372036854775807",
        "1000",
    ];

    pub(super) const FLOAT: &[&str] = &[
        "0", "0.0", "-1.0", "1e300", "1e-300", "nan", "inf", "-inf", "100", "1e9", "1e10", "0.12",
        r#""5""#,
    ];

    pub(super) const BOOL: &[&str] = &["true", "false", r#""true""#, "1"];

    pub(super) const TEXT: &[&str] = &[
        r#""a""#,
        r#""""#,
        r#""db""#,
        r#""w#1""#,
        r##""#""##,
        r#""  ""#,
        r#""x\ny""#,
        r#""名前""#,
        "42",
    ];

    pub(super) const ENGINE: &[&str] = &[
        r#""io_uring""#,
        r#""psync""#,
        r#""null""#,
        r#""uring""#,
        r#""spdk""#,
        r#""""#,
    ];

    pub(super) const CHOICE: &[&str] = &[r#""round-robin""#, r#""random""#, r#""lottery""#];

    pub(super) const ARRIVALS: &[&str] = &[r#""uniform""#, r#""poisson""#, r#""bursty""#];

    pub(super) const DIST: &[&str] = &[
        r#""uniform""#,
        r#""shuffle""#,
        r#""zipf:1.2""#,
        r#""zipf:0""#,
        r#""zipf:-1""#,
        r#""zipf:nan""#,
        r#""zipf:inf""#,
        r#""zipf:""#,
        r#""zoned:80/10:20/90""#,
        r#""zoned:""#,
        r#""zoned:100/0""#,
        r#""zoned:0/100""#,
        r#""zoned:50/50:50/50""#,
        r#""zoned:101/50:-1/50""#,
        r#""zoned:nan/nan""#,
        r#""pareto""#,
    ];

    pub(super) const ON_ERROR: &[&str] = &[r#""continue""#, r#""stop""#, r#""explode""#];

    pub(super) const STOP_WHEN: &[&str] = &[
        r#""p99 > 20ms""#,
        r#""db:mean > 5ms""#,
        r#""nope:p99 > 5ms""#,
        r#""p100 > 1s""#,
        r#""> ""#,
        r#"":p99 > -1s""#,
        r#""p99 > 1e99s""#,
        r#""p99.9 > 0""#,
    ];

    pub(super) const PATTERN: &[&str] = &[r#""sequential""#, r#""random""#, r#""zigzag""#];

    pub(super) const PATH: &[&str] = &[
        r#""/tmp/storlab-fuzz.dat""#,
        r#""""#,
        r#""/dev/null""#,
        r#""rel/path.dat""#,
        r#""/nonexistent/dir/x""#,
    ];

    pub(super) const NAMES: &[&str] = &[
        r#"["a"]"#,
        r#"[]"#,
        r#"["nope"]"#,
        r#"["a", "a"]"#,
        r#"["b", "a"]"#,
        "[1]",
    ];

    pub(super) const CPUS: &[&str] = &["[0, 1]", "[]", "[-1]", "[99999]", "[0.5]"];

    pub(super) const MIX: &[&str] = &[
        r#"{ "4k" = 50, "8k" = 50 }"#,
        "{}",
        r#"{ "0" = 1 }"#,
        r#"{ "4k" = 0 }"#,
        r#"{ "4kk" = 1 }"#,
        r#"{ "4k" = -1 }"#,
        r#"{ "128MiB" = 1 }"#,
        r#"{ "1e99GiB" = 1 }"#,
    ];

    pub(super) const COUNT_CYCLE: &[&str] = &[
        "[1, 2, 4]",
        "[]",
        "[0]",
        "[4294967295]",
        "{ from = 1, to = 64 }",
        "{ from = 64, to = 1 }",
        "{ from = 0, to = 0 }",
        "{ from = 1, to = 4294967295 }",
        "{ from = 1 }",
        "[-1]",
        "[1.5]",
    ];

    pub(super) const SIZE_CYCLE: &[&str] = &[
        r#"["4k", "8k"]"#,
        "[]",
        r#"{ from = "512", to = "1M" }"#,
        r#"{ from = "1M", to = "4k" }"#,
        r#"{ from = "0", to = "4k" }"#,
        r#"{ from = "1", to = "16PiB" }"#,
        r#"["0"]"#,
        r#"["4kk"]"#,
        "[4096, 8192]",
    ];

    pub(super) const PCT_LIST: &[&str] =
        &["[0, 50, 100]", "[]", "[101]", r#"["70%", "nan"]"#, "[nan]"];

    pub(super) const FLOAT_LIST: &[&str] = &[
        "[10, 50, 100]",
        "[]",
        "[0]",
        "[201]",
        "[nan]",
        "[inf]",
        "[-5]",
        "[1e300]",
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]",
    ];

    pub(super) const ORDER: &[&str] = &[
        r#"["workers", "block_size"]"#,
        r#"["bogus"]"#,
        "[]",
        r#"["read", "read"]"#,
        r#"["targets", "workers", "queue_depth", "block_size", "read", "random", "rate"]"#,
    ];

    pub(super) const VERSION: &[&str] = &[
        "2010",
        r#""2013""#,
        "2007",
        "1999",
        r#""vista""#,
        "-1",
        "4294967296",
    ];

    pub(super) const THREADS: &[&str] =
        &["2", "0", "257", r#""auto""#, r#""many""#, r#""0""#, "-1"];

    pub(super) const TEST: &[&str] = &[
        r#""performance""#,
        r#""stress""#,
        r#""backup""#,
        r#""recovery""#,
        r#""soak""#,
    ];

    pub(super) const PATHS: &[&str] = &[
        r#"["storlab-scratch/x"]"#,
        "[]",
        r#"[""]"#,
        r#"["/a", "/b", "/c"]"#,
    ];
}

/// Every kind, to pick a wrong-typed value from.
pub(super) const KINDS: [Kind; 28] = [
    Kind::Size,
    Kind::Dur,
    Kind::Pct,
    Kind::Count,
    Kind::Int,
    Kind::Float,
    Kind::Bool,
    Kind::Text,
    Kind::Engine,
    Kind::Choice,
    Kind::Arrivals,
    Kind::Dist,
    Kind::OnError,
    Kind::StopWhen,
    Kind::Pattern,
    Kind::Path,
    Kind::Names,
    Kind::Cpus,
    Kind::Mix,
    Kind::CountCycle,
    Kind::SizeCycle,
    Kind::PctList,
    Kind::FloatList,
    Kind::Order,
    Kind::Version,
    Kind::Threads,
    Kind::Test,
    Kind::Paths,
];

/// The job-file grammar: keys of each table and the kind of their values.
pub(super) const TOP: &[(&str, Kind)] = &[
    ("description", Kind::Text),
    ("engine", Kind::Engine),
    ("duration", Kind::Dur),
    ("ramp", Kind::Dur),
    ("interval", Kind::Dur),
    ("seed", Kind::Int),
    ("buffered", Kind::Bool),
    ("destroy_data", Kind::Bool),
    ("batch", Kind::Count),
    ("verify", Kind::Bool),
    ("on_error", Kind::OnError),
    ("max_errors", Kind::Int),
    ("repeat", Kind::Count),
    ("pause", Kind::Dur),
    ("curve", Kind::FloatList),
    ("stop_when", Kind::StopWhen),
    ("until_steady", Kind::Bool),
    ("round", Kind::Dur),
    ("steady_rounds", Kind::Count),
    ("steady_range", Kind::Pct),
    ("steady_slope", Kind::Pct),
    ("max_rounds", Kind::Count),
];
pub(super) const TARGET: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("path", Kind::Path),
    ("size", Kind::Size),
    ("sync", Kind::Bool),
    ("fsync_every", Kind::Count),
];
pub(super) const WORKER: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("count", Kind::Count),
    ("targets", Kind::Names),
    ("one_target_each", Kind::Bool),
    ("target_choice", Kind::Choice),
    ("queue_depth", Kind::Count),
    ("cpus", Kind::Cpus),
    ("rate_iops", Kind::Float),
    ("arrivals", Kind::Arrivals),
    ("io_limit", Kind::Int),
];
pub(super) const ACCESS: &[(&str, Kind)] = &[
    ("class", Kind::Text),
    ("weight", Kind::Count),
    ("block_size", Kind::Size),
    ("block_sizes", Kind::Mix),
    ("roll_every", Kind::Size),
    ("read", Kind::Pct),
    ("random", Kind::Pct),
    ("align", Kind::Size),
    ("distribution", Kind::Dist),
    ("offset", Kind::Size),
    ("length", Kind::Size),
    ("sync", Kind::Bool),
    ("fsync_every", Kind::Count),
];
pub(super) const CYCLE: &[(&str, Kind)] = &[
    ("order", Kind::Order),
    ("block_size", Kind::SizeCycle),
    ("workers", Kind::CountCycle),
    ("queue_depth", Kind::CountCycle),
    ("targets", Kind::CountCycle),
    ("read", Kind::PctList),
    ("random", Kind::PctList),
    ("rate", Kind::FloatList),
];
pub(super) const PRECONDITION: &[(&str, Kind)] = &[
    ("passes", Kind::Count),
    ("pattern", Kind::Pattern),
    ("block_size", Kind::Size),
];
pub(super) const EXCHANGE: &[(&str, Kind)] = &[
    ("mailboxes", Kind::Int),
    ("mailbox_size", Kind::Size),
    ("iops_per_mailbox", Kind::Float),
    ("messages_per_day", Kind::Count),
    ("version", Kind::Version),
    ("databases", Kind::Count),
    ("db_paths", Kind::Paths),
    ("log_paths", Kind::Paths),
    ("threads", Kind::Threads),
    ("headroom", Kind::Pct),
    ("maintenance", Kind::Bool),
    ("test", Kind::Test),
    ("duration", Kind::Dur),
    ("ramp", Kind::Dur),
    ("capacity", Kind::Pct),
    ("db_capacity", Kind::Pct),
    ("throughput", Kind::Pct),
    ("find_max_mailboxes", Kind::Bool),
    ("db_read_latency", Kind::Dur),
    ("log_write_latency", Kind::Dur),
    ("max_latency", Kind::Dur),
    ("log_files", Kind::Count),
    ("page_size", Kind::Size),
    ("backup_block_size", Kind::Size),
    ("engine", Kind::Engine),
    ("seed", Kind::Int),
    ("interval", Kind::Dur),
    ("destroy_data", Kind::Bool),
    ("verify", Kind::Bool),
];

/// One generated `key = value` line: which key, whether its value is of the wrong kind, which
/// value; sometimes an unknown key.
pub(super) type LineChoice = (Index, u8, Index, Index);

/// Whether `value` (TOML source) is well-formed for `kind`: a tame file uses only those, so
/// that it gets past TOML and unit parsing to the resolver's own checks.
pub(super) fn parses(kind: Kind, value: &str) -> bool {
    let text = value.trim_matches('"');
    match kind {
        Kind::Size => value.starts_with('"') && storlab::units::parse_size(text).is_ok(),
        Kind::Dur => value.starts_with('"') && storlab::units::parse_duration(text).is_ok(),
        Kind::Pct => value.starts_with('"') && storlab::units::parse_percent(text).is_ok(),
        Kind::Count => value.parse::<u32>().is_ok(),
        Kind::Int => value.parse::<u64>().is_ok() && value.parse::<i64>().is_ok(),
        Kind::Float => !value.starts_with('"'),
        Kind::Bool => value == "true" || value == "false",
        Kind::Text => value.starts_with('"'),
        Kind::Names => value != "[1]",
        Kind::Cpus => !value.contains(['-', '.']),
        Kind::Mix => !value.contains(['-', 'e']),
        Kind::CountCycle => !value.contains(['-', '.']) && value != "{ from = 1 }",
        Kind::SizeCycle => !value.contains("kk"),
        Kind::PctList => !value.contains(['1', 'n']) || value.contains("100]"),
        Kind::Version | Kind::Threads => !value.starts_with('-') && value != "4294967296",
        _ => true,
    }
}
