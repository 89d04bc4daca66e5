//! A network partition: three ranks, each in its own network namespace on a bridge of its own
//! (three "hosts" with their own addresses, joined by one switch), started by `mpirun` through a
//! launcher agent that runs `ip netns exec` where a real cluster runs `ssh`. Mid-run rank 2's
//! switch port goes down: rank 2 neither dies nor answers, and no TCP connection to it is
//! reset. Rank 0's watchdog names it, the others' results are merged and written, and the job
//! ends within seconds with the Open MPI settings docs/multihost.md gives.

use super::per_rank_job;
use crate::harness::{STORLAB, load_json, scratch, skip, u64_at};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `ip` with `args`; whether it succeeded (its error output on failure).
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip (Debian: iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Network namespaces for `n` hosts joined by a bridge in a switch namespace; removed (with
/// every process left in them) when dropped.
struct Hosts {
    /// `PREFIX-sw`, then `PREFIX-0`, `PREFIX-1`, ...
    names: Vec<String>,
    /// The hosts' addresses, in rank order.
    addresses: Vec<String>,
}

impl Hosts {
    fn new(n: usize) -> Result<Hosts, String> {
        let id = std::process::id();
        let prefix = format!("sl{}", id % 100_000);
        let subnet = format!("10.{}.{}", 100 + id % 100, (id / 100) % 250);
        let switch = format!("{prefix}-sw");
        let mut hosts = Hosts {
            names: vec![switch.clone()],
            addresses: Vec::new(),
        };
        ip(&["netns", "add", &switch])?;
        ip(&["-n", &switch, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &switch, "link", "set", "br0", "up"])?;
        for i in 0..n {
            let ns = format!("{prefix}-{i}");
            ip(&["netns", "add", &ns])?;
            hosts.names.push(ns.clone());
            let (inner, port) = (format!("v{i}"), format!("p{i}"));
            ip(&[
                "link", "add", &inner, "netns", &ns, "type", "veth", "peer", "name", &port,
                "netns", &switch,
            ])?;
            ip(&["-n", &switch, "link", "set", &port, "master", "br0"])?;
            ip(&["-n", &switch, "link", "set", &port, "up"])?;
            let address = format!("{subnet}.{}", 10 + i);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{address}/24"),
                "dev",
                &inner,
            ])?;
            ip(&["-n", &ns, "link", "set", &inner, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            hosts.addresses.push(address);
        }
        Ok(hosts)
    }

    /// Host `i`'s namespace.
    fn namespace(&self, i: usize) -> &str {
        &self.names[i + 1]
    }

    /// The subnet, for Open MPI's interface selection.
    fn subnet(&self) -> String {
        let a = &self.addresses[0];
        format!("{}.0/24", &a[..a.rfind('.').expect("dotted")])
    }

    /// Takes host `i`'s switch port down: its packets go nowhere, nothing is reset.
    fn cut(&self, i: usize) {
        ip(&[
            "-n",
            &self.names[0],
            "link",
            "set",
            &format!("p{i}"),
            "down",
        ])
        .expect("link down");
    }

    /// Writes `DIR/agent` (what `mpirun` runs instead of ssh: the rest of its arguments in
    /// the host's namespace) and `DIR/hosts` (a hostfile of the addresses, one slot each).
    fn launcher_files(&self, dir: &Path) -> (String, String) {
        let mut cases = String::new();
        for (i, a) in self.addresses.iter().enumerate() {
            cases.push_str(&format!("  {a}) ns={} ;;\n", self.namespace(i)));
        }
        let agent = format!(
            "#!/bin/sh\n# mpirun's launcher agent: [options] HOST COMMAND...\n\
             while [ $# -gt 0 ]; do case \"$1\" in -*) shift ;; *) break ;; esac; done\n\
             host=$1; shift\ncase \"$host\" in\n{cases}  *) echo \"unknown host $host\" >&2; exit 1 ;;\nesac\n\
             exec ip netns exec \"$ns\" sh -c \"$*\"\n"
        );
        let agent_path = dir.join("agent");
        std::fs::write(&agent_path, agent).unwrap();
        let status = Command::new("chmod").arg("+x").arg(&agent_path).status();
        assert!(status.unwrap().success());
        let hostfile = dir.join("hosts");
        let lines: Vec<String> = (self.addresses.iter())
            .map(|a| format!("{a} slots=1"))
            .collect();
        std::fs::write(&hostfile, lines.join("\n") + "\n").unwrap();
        let path = |p: &Path| p.to_str().unwrap().to_string();
        (path(&agent_path), path(&hostfile))
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in self.names.iter().rev() {
            let pids = Command::new("ip").args(["netns", "pids", ns]).output();
            for pid in pids
                .map(|o| o.stdout)
                .unwrap_or_default()
                .split(|&b| b == b'\n')
            {
                let pid = String::from_utf8_lossy(pid);
                if !pid.trim().is_empty() {
                    let _ = Command::new("kill").args(["-KILL", pid.trim()]).status();
                }
            }
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

/// Whether network namespaces, veth pairs and bridges can be made here (`Err`: why not).
fn namespaces_work() -> Result<Hosts, String> {
    if !rustix::process::geteuid().is_root() {
        return Err("not root: network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN".into());
    }
    Hosts::new(3)
}

/// Waits until `done` holds, at most `limit`; how long it took, or `None`.
fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let from = Instant::now();
    while from.elapsed() < limit {
        if done() {
            return Some(from.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn a_rank_cut_off_by_a_network_partition_ends_the_job_within_seconds_with_the_others_merged() {
    let test =
        "a_rank_cut_off_by_a_network_partition_ends_the_job_within_seconds_with_the_others_merged";
    if let Some(why) = super::mpi_missing() {
        skip(test, why);
        return;
    }
    let hosts = match namespaces_work() {
        Ok(h) => h,
        Err(why) => {
            skip(test, &why);
            return;
        }
    };
    let dir = scratch();
    let (agent, hostfile) = hosts.launcher_files(dir.path());
    let file = per_rank_job(dir.path(), "120s", 2);
    let merged_path = dir.path().join("merged.json");
    let subnet = hosts.subnet();
    // mpirun runs on host 0, in its namespace; the others are reached through the agent.
    let mut mpirun = Command::new("ip");
    mpirun
        .args(["netns", "exec", hosts.namespace(0), "mpirun"])
        .args(["--allow-run-as-root", "--bind-to", "none", "-np", "3"])
        .args(["--hostfile", &hostfile, "--mca", "plm_rsh_agent", &agent])
        .args(["--mca", "btl", "tcp,self"])
        .args(["--mca", "oob_tcp_if_include", &subnet])
        .args(["--mca", "btl_tcp_if_include", &subnet]);
    // The settings docs/multihost.md gives for partitions.
    for (key, value) in [
        ("oob_tcp_keepalive_time", "5"),
        ("oob_tcp_keepalive_intvl", "2"),
        ("oob_tcp_keepalive_probes", "3"),
        ("odls_base_sigkill_timeout", "10"),
    ] {
        mpirun.args(["--mca", key, value]);
    }
    let mut child = mpirun
        .current_dir(dir.path())
        .arg(STORLAB)
        .args(["run", file.to_str().unwrap(), "-o"])
        .arg(&merged_path)
        .stdout(std::fs::File::create(dir.path().join("mpirun.out")).unwrap())
        .stderr(std::fs::File::create(dir.path().join("mpirun.err")).unwrap())
        .spawn()
        .expect("start mpirun");
    let series = dir.path().join("merged.rank2.ndjson");
    let measuring = wait_for(Duration::from_secs(90), || {
        std::fs::read_to_string(&series).is_ok_and(|s| s.lines().count() >= 2)
    });
    if measuring.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        // What mpirun and the ranks said, and what they wrote: where the start stopped.
        let said = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
        let files: Vec<String> = (std::fs::read_dir(dir.path()).unwrap().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        panic!(
            "rank 2 never started measuring in its namespace\n--- files: {files:?}\n--- mpirun's output\n{}\n--- its errors\n{}",
            said("mpirun.out"),
            said("mpirun.err")
        );
    }
    hosts.cut(2);
    let written = wait_for(Duration::from_secs(90), || merged_path.exists());
    let ended = wait_for(Duration::from_secs(120), || {
        child.try_wait().ok().flatten().is_some()
    });
    if ended.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let written = written.expect("no merged results within 90 s of the partition");
    let ended = ended.expect("mpirun still running 120 s after the merged results");
    eprintln!("partition: merged results {written:?} after the cut, mpirun ended {ended:?} later");
    // The watchdog's 10 s, then 10 s for the results of the ranks still there.
    assert!(
        written < Duration::from_secs(60),
        "merged results {written:?} after the partition"
    );
    assert!(
        written + ended < Duration::from_secs(120),
        "the job ended {:?} after the partition",
        written + ended
    );
    let merged = load_json(&merged_path);
    assert_eq!(merged["hosts"][2]["present"], false, "{}", merged["hosts"]);
    assert_eq!(merged["hosts"][0]["present"], true);
    assert_eq!(merged["hosts"][1]["present"], true);
    assert_eq!(merged["verdict"]["result"], "FAIL");
    let r0 = load_json(&dir.path().join("merged.rank0.json"));
    let why = r0["interrupted"].as_str().unwrap_or_default();
    assert!(
        why.contains("rank 2 on") && why.contains("heartbeat"),
        "{why}"
    );
    let own = |r: usize| load_json(&dir.path().join(format!("merged.rank{r}.json")));
    let sum: u64 = (0..2).map(|r| u64_at(&own(r), "/totals/read/ops")).sum();
    assert_eq!(u64_at(&merged, "/totals/read/ops"), sum);
    assert!(sum > 0);
}
