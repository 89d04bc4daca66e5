//! Launchers that start several copies of storlab (mpirun, srun): a storlab that cannot run
//! over many hosts (built without MPI, or a command that runs on one host) refuses to be one of
//! several copies that would each believe they are alone, and so does one whose MPI sees fewer
//! ranks than the launcher started (another MPI's launcher: each copy a world of one).
//! Compiled in every build.

/// What launchers tell the processes they start: how many ranks the run has.
const LAUNCHER_SIZES: [&str; 3] = [
    // Open MPI's mpirun (and PMIx launches of it).
    "OMPI_COMM_WORLD_SIZE",
    // MPICH's and Intel MPI's Hydra.
    "PMI_SIZE",
    // Slurm's srun, for the job step it starts.
    "SLURM_STEP_NUM_TASKS",
];

/// How to run over many hosts instead, in this build.
#[cfg(not(feature = "mpi"))]
const HINT: &str = "start one copy per run, or use a storlab built with `--features mpi`";
#[cfg(feature = "mpi")]
const HINT: &str = "start one copy per run; `storlab run`, `exchange` and `fs` run over many hosts when started by the mpirun of the MPI this storlab was built with";

/// Refuses a run whose launcher started more ranks than this cluster has (`size`): each copy
/// would believe it is rank 0 of a run of its own and write the same targets. `env` reads the
/// environment.
pub(crate) fn check_launcher(
    size: usize,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    if let Some((var, n)) = launched(env) {
        if n > size {
            return Err(format!(
                "started by a launcher as one of {n} ranks ({var}={n}), but this storlab sees {size}: every copy would believe it is rank 0 of a run of its own and write the same targets; {HINT} (docs/multihost.md)"
            ));
        }
    }
    Ok(())
}

/// The launcher variable that says how many ranks the run has, and its value, when a
/// launcher started this process as one of several.
pub(crate) fn launched(env: &dyn Fn(&str) -> Option<String>) -> Option<(&'static str, usize)> {
    LAUNCHER_SIZES.into_iter().find_map(|var| {
        env(var)
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 1)
            .map(|n| (var, n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn copies_that_each_believe_they_are_alone_are_refused() {
        let env = |vars: &[(&str, &str)]| {
            let map: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            move |k: &str| map.get(k).cloned()
        };
        let e = check_launcher(1, &env(&[("OMPI_COMM_WORLD_SIZE", "4")])).unwrap_err();
        assert!(e.contains("one of 4 ranks (OMPI_COMM_WORLD_SIZE=4)"), "{e}");
        assert!(check_launcher(1, &env(&[("SLURM_STEP_NUM_TASKS", "2")])).is_err());
        assert!(check_launcher(4, &env(&[("PMI_SIZE", "4")])).is_ok());
        assert!(check_launcher(1, &env(&[("OMPI_COMM_WORLD_SIZE", "1")])).is_ok());
        assert!(check_launcher(1, &env(&[])).is_ok());
    }
}
