//! Failed I/Os kept in detail: which target, operation, offset and length, and the errno by
//! name and text.

/// One failed I/O, kept in detail.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorDetail {
    /// Target index.
    pub target: usize,
    /// `read`, `write` or `flush`.
    pub op: String,
    /// Byte offset.
    pub offset: u64,
    /// Bytes requested.
    pub len: u32,
    /// What happened: an errno name and text, or a short transfer.
    pub error: String,
    /// When, ms from the start of the run.
    pub t_ms: u64,
}

/// `EIO (Input/output error)`: an errno's name and the system's text for it.
pub(crate) fn errno_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let text = text
        .strip_suffix(&format!(" (os error {errno})"))
        .unwrap_or(&text)
        .to_string();
    match errno_name(errno) {
        Some(name) => format!("{name} ({text})"),
        None => format!("errno {errno} ({text})"),
    }
}

fn errno_name(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ECANCELED => "ECANCELED",
        libc::EDQUOT => "EDQUOT",
        libc::EBADMSG => "EBADMSG",
        libc::EILSEQ => "EILSEQ",
        libc::ENOLINK => "ENOLINK",
        libc::EREMOTEIO => "EREMOTEIO",
        libc::ENOTCONN => "ENOTCONN",
        libc::ESTALE => "ESTALE",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::ENODATA => "ENODATA",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_are_named() {
        assert_eq!(super::errno_text(libc::EIO), "EIO (Input/output error)");
        assert_eq!(
            super::errno_text(libc::ENOSPC),
            "ENOSPC (No space left on device)"
        );
        assert!(super::errno_text(4000).starts_with("errno 4000 ("));
    }
}
