//! The terminal's part: shell completion scripts and the man pages, generated from the same
//! command-line definitions as the parser (`clap_complete`, `clap_mangen`), so they never
//! disagree with it; and clap's errors where its own tips mislead.

use crate::report::console;
use crate::{Usage, exit};
use anyhow::Result;
use std::path::Path;

/// `storlab completions SHELL`: the completion script on standard output.
pub(super) fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let mut cmd = super::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "storlab", &mut script);
    console::print_raw(String::from_utf8_lossy(&script).trim_end());
    Ok(exit::OK)
}

/// `storlab man [-o DIR]`: the man page on standard output, or every page (`storlab.1` and one
/// per subcommand, `storlab-run.1`...) written to `DIR`.
pub(super) fn man(output: Option<&Path>) -> Result<i32> {
    let cmd = super::command();
    let Some(dir) = output else {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        console::print_raw(String::from_utf8_lossy(&page).trim_end());
        return Ok(exit::OK);
    };
    if !dir.is_dir() {
        return Err(Usage(format!(
            "{} is not a directory: create it first (e.g. mkdir -p {})",
            dir.display(),
            dir.display()
        ))
        .into());
    }
    let mut pages = vec![("storlab.1".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        let name = format!("storlab-{}", sub.get_name());
        pages.push((format!("{name}.1"), sub.clone().name(name)));
    }
    for (file, _) in &pages {
        crate::files::check_output("the man page", &dir.join(file))?;
    }
    for (file, page) in pages {
        let mut text = Vec::new();
        clap_mangen::Man::new(page).render(&mut text)?;
        let path = dir.join(&file);
        crate::files::write_output("the man page", &path, &text)?;
    }
    console::note(&format!("man pages written to {}", dir.display()));
    Ok(exit::OK)
}

/// clap's error for an unknown argument, with its tip replaced where clap's own misleads:
/// `storlab report R.json --html x.html` is told `-o x.html`, not `-- --html`; a negative
/// value (`--size -5G`) is told that no size, count or time is negative, not `-- -5`. `None`:
/// clap's error as it is.
pub(super) fn better_tip(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let text = e.render().to_string();
    let clap_tip = text
        .lines()
        .find(|l| l.trim_start().starts_with("tip: to pass"))?;
    let tip = if arg.starts_with('-') && arg[1..].starts_with(|c: char| c.is_ascii_digit()) {
        format!(
            "tip: `{arg}` reads as a flag: no size, count, rate or time is negative; write it without the `-`"
        )
    } else if arg == "--html" && text.contains("storlab report") {
        "tip: storlab report writes the HTML report with -o FILE.html (--output)".to_string()
    } else if arg.starts_with("--") {
        "tip: `--help` lists the flags this command takes".to_string()
    } else {
        return None;
    };
    Some(text.replace(clap_tip, &format!("  {tip}")))
}
