/// An error a ``DataLoading`` throws that trying again will not fix — a refused redirect, an
/// address a policy forbids: the downloader does not retry it (``ImageDownloadError/isTransient``
/// is `false` for it) and the pipeline may remember the URL as failed.
///
/// ```swift
/// struct Refused: Error, PermanentlyFailing {}
/// ```
public protocol PermanentlyFailing: Error {}
