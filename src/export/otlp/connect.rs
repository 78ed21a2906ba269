//! The TCP connection under the gRPC channel, with delayed ACKs off on Linux.
//!
//! Measured into rotel (docs/performance.md): a collector reads a request, sends a small
//! HTTP/2 WINDOW_UPDATE, then its response. With Nagle on at the collector, the response waits
//! until that WINDOW_UPDATE is acknowledged, and our kernel delays the ACK by 40 ms when it has
//! nothing to send back, so one request took 40 ms whatever its size: 0.1x the HTTP rate.
//! `TCP_QUICKACK`, set again after every read (the kernel leaves quick-ACK mode by itself),
//! acknowledges at once. Where it does not exist (macOS), several exports in flight hide the
//! wait instead: the next request's data carries the ACK.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Uri;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Connects to the channel's URI, as tonic's own connector does (no proxy, TCP_NODELAY on),
/// and acknowledges what the collector sends at once.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QuickAckConnector;

impl tower_service::Service<Uri> for QuickAckConnector {
    type Response = TokioIo<QuickAck>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(async move {
            let host = uri
                .host()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no host"))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
                Some("https") => 443,
                _ => 80,
            });
            let stream = TcpStream::connect((host.as_str(), port)).await?;
            stream.set_nodelay(true)?;
            let stream = QuickAck(stream);
            stream.quick_ack();
            Ok(TokioIo::new(stream))
        })
    }
}

/// A TCP stream that acknowledges what it receives without delay.
pub(super) struct QuickAck(TcpStream);

impl QuickAck {
    fn quick_ack(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // Best effort: without it, exports are only slower.
            let _ = rustix::net::sockopt::set_tcp_quickack(&self.0, true);
        }
    }
}

impl AsyncRead for QuickAck {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let read = Pin::new(&mut self.0).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) {
            self.quick_ack();
        }
        read
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
