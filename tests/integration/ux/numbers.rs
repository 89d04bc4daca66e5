//! What a person reads in the terminal, checked mechanically: every number carries its unit
//! (written after it, or named by the column it stands in), and no number has more than 4
//! significant digits. Exact values (byte offsets, seeds) and names that contain digits
//! (`db1`, `worker#0`, `Exchange 2010`, `step 3`, versions, paths, dates) are not quantities.

/// Words that may follow a number as its unit.
const UNITS: &[&str] = &[
    "B",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "PiB",
    "ns",
    "µs",
    "ms",
    "s",
    "min",
    "h",
    "%",
    "IOPS",
    "MB/s",
    "reads/s",
    "writes/s",
    "I/O",
    "I/Os",
    "worker",
    "workers",
    "outstanding",
    "error",
    "errors",
    "block",
    "blocks",
    "mailbox",
    "mailboxes",
    "database",
    "databases",
    "thread",
    "threads",
    "step",
    "steps",
    "run",
    "runs",
    "round",
    "rounds",
    "pass",
    "passes",
    "CPU",
    "CPUs",
    "target",
    "targets",
    "transactional",
    "log",
    "of",
    "per",
    "complete",
    "intervals",
    "corrupted",
    "misdirected",
    "lost",
    "torn",
    "unchecked",
    "tests",
    "test",
    "seconds",
    "files",
    "file",
    "bytes/s",
    "bytes",
    "tasks",
    "users",
    "reads",
    "writes",
    "×",
];

/// Words after which a number is a name or an exact value, not a quantity.
const NAMING: &[&str] = &[
    "step", "rep", "round", "Exchange", "offset", "seed", "version", "storlab", "level", "schema",
    "trial", "line", "kernel", "error", "group",
];

/// Column headings that name the unit of the numbers under them.
const COLUMN_UNITS: &[&str] = &[
    "IOPS",
    "MB/s",
    "errors",
    "reads/s",
    "writes/s",
    "mailboxes",
    "threads",
    "busy%",
    "IOPS/%",
    "completed",
];

/// A problem found in `text`: the line and what is wrong.
pub(crate) fn problems(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_table = false;
    for (n, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            in_table = false;
            continue;
        }
        // A table's heading names its columns' units; its rows follow until a blank line.
        if words.iter().any(|w| COLUMN_UNITS.contains(w)) && !has_number(line) {
            in_table = true;
            continue;
        }
        for (i, word) in words.iter().enumerate() {
            let Some((number, rest)) = leading_number(word) else {
                continue;
            };
            let previous = i.checked_sub(1).map(|p| words[p]).unwrap_or("");
            let previous = previous.trim_matches(|c: char| !c.is_alphanumeric());
            if NAMING.contains(&previous) || is_name(word) {
                continue;
            }
            if significant_digits(number) > 4 {
                found.push(format!(
                    "line {}: `{word}` has more than 4 significant digits: {line}",
                    n + 1
                ));
            }
            let suffixed = ["k", "M", "G"].contains(&rest.trim_end_matches([',', ';', ')']));
            let unit_after = if suffixed || rest.is_empty() || rest == "," || rest == ")" {
                words.get(i + 1).copied().unwrap_or("")
            } else {
                rest
            };
            let unit_after = unit_after.trim_matches(|c: char| ",;:.)(".contains(c));
            let unit_known = UNITS.iter().any(|u| unit_after.starts_with(u))
                || (suffixed && in_table)
                || rest.starts_with('%')
                || rest.starts_with('×');
            if !in_table && !unit_known {
                found.push(format!("line {}: `{word}` has no unit: {line}", n + 1));
            }
        }
    }
    found
}

fn has_number(line: &str) -> bool {
    line.split_whitespace()
        .any(|w| leading_number(w).is_some() && !is_name(w))
}

/// The number a word starts with (digits, one decimal point, a sign, `≤`/`≥`/`×` dropped) and
/// what follows it.
fn leading_number(word: &str) -> Option<(&str, &str)> {
    let w = word.trim_start_matches(['(', '[', '+', '-', '≤', '≥', '×', '~', '±']);
    let end = w
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
        .map_or(w.len(), |(i, _)| i);
    let number = &w[..end];
    (number.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .then_some((number.trim_end_matches('.'), &w[end..]))
}

/// A word with digits that is a name, a path, a version, a date or a time of day.
fn is_name(word: &str) -> bool {
    let w = word.trim_matches(|c: char| "(),;:`'\"".contains(c));
    w.contains('/') && !w.ends_with("/s")
        || w.contains('#')
        || w.contains('^')
        || w.split_once('-')
            .is_some_and(|(_, after)| after.starts_with(char::is_alphabetic))
        || w.contains('=')
        || w.matches('.').count() > 1
        || w.matches('-').count() > 1
        || w.starts_with("db")
        || w.starts_with("0x")
        || ["st", "nd", "rd", "th"].iter().any(|o| {
            w.strip_suffix(o)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        || w.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && w.chars().any(|c| c.is_ascii_digit())
            && !["k", "M", "G"].iter().any(|s| w.ends_with(s))
}

fn significant_digits(number: &str) -> usize {
    number
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|&c| c == '0')
        .count()
}

#[test]
fn the_checker_finds_numbers_without_units_or_with_too_many_digits() {
    assert!(problems("measured 0.54 ms (limit ≤ 20 ms)").is_empty());
    assert!(problems("a target of 120 transactional IOPS").is_empty());
    assert!(problems("step 3 of the run, db1 and worker#0 on /dev/vda1").is_empty());
    assert_eq!(
        problems("measured 120.000 IOPS").len(),
        1,
        "six significant digits"
    );
    assert_eq!(problems("limit ≤ 20.000").len(), 2, "no unit, five digits");
    assert_eq!(problems("1073741824 bytes each").len(), 1, "ten digits");
    assert_eq!(problems("1073741824 each").len(), 2, "ten digits, no unit");
    assert_eq!(problems("IOPS 182").len(), 1, "a unit before is not after");
    let table = "class op IOPS MB/s mean\nrandom read 30.7k 251 634 µs\n\nIOPS 182";
    assert_eq!(problems(table).len(), 1, "{:?}", problems(table));
}
