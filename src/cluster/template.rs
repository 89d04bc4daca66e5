//! Per-rank paths: `{rank}`, `{host}` and `{node}` in a target's path become this rank's number,
//! host name and node (the index of its host among the run's distinct hosts, in rank order), so
//! one job gives every host its own targets. `{{` and `}}` are literal braces.

/// `path` with `{rank}`, `{host}` and `{node}` replaced; an unknown or unclosed `{` is an error
/// that names it.
pub(crate) fn expand(path: &str, rank: usize, host: &str, node: usize) -> Result<String, String> {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{") {
            out.push('{');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            out.push('}');
            rest = after;
        } else if tail.starts_with('}') {
            return Err(format!(
                "`{path}`: a `}}` without its `{{`; write `}}}}` for a literal brace"
            ));
        } else {
            let Some(end) = tail.find('}') else {
                return Err(format!(
                    "`{path}`: a `{{` without its `}}`; write `{{{{` for a literal brace"
                ));
            };
            match &tail[1..end] {
                "rank" => out.push_str(&rank.to_string()),
                "host" => out.push_str(host),
                "node" => out.push_str(&node.to_string()),
                other => {
                    return Err(format!(
                        "`{path}`: unknown placeholder `{{{other}}}`; use {{rank}}, {{host}} or {{node}}"
                    ));
                }
            }
            rest = &tail[end + 1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_the_rank_host_and_node() {
        assert_eq!(
            expand("/mnt/{host}/db-{rank}.edb", 3, "ex2", 1).unwrap(),
            "/mnt/ex2/db-3.edb"
        );
        assert_eq!(expand("/dev/sd{node}", 0, "a", 2).unwrap(), "/dev/sd2");
        assert_eq!(expand("/x/{{literal}}", 0, "a", 0).unwrap(), "/x/{literal}");
        assert_eq!(expand("/plain", 5, "a", 0).unwrap(), "/plain");
    }

    #[test]
    fn an_unknown_or_unclosed_placeholder_is_named() {
        let e = expand("/mnt/{rnak}/x", 0, "a", 0).unwrap_err();
        assert!(e.contains("unknown placeholder `{rnak}`"), "{e}");
        let e = expand("/mnt/{rank", 0, "a", 0).unwrap_err();
        assert!(e.contains("without its `}`"), "{e}");
        let e = expand("/mnt/}x", 0, "a", 0).unwrap_err();
        assert!(e.contains("without its `{`"), "{e}");
    }
}
