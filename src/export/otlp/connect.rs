//! The TCP connection under the gRPC channel, with delayed ACKs off on Linux.
//!
//! Measured into rotel (docs/performance.md): a collector reads a request, sends a small
//! HTTP/2 WINDOW_UPDATE, then its response. With Nagle on at the collector, the response waits
//! until that WINDOW_UPDATE is acknowledged, and our kernel delays the ACK by 40 ms when it has
//! nothing to send back, so one request took 40 ms whatever its size: 0.1x the HTTP rate.
//! `TCP_QUICKACK`, set again after every read (the kernel leaves quick-ACK mode by itself),
//! acknowledges at once. Where it does not exist (macOS), several exports in flight hide the
//! wait instead: the next request's data carries the ACK.

//!
//! Connecting is hyper-util's own `HttpConnector`, as tonic's default connector uses it: each
//! resolved address gets its share of the connect timeout, and when a name has both IPv6 and
//! IPv4 addresses the other family is tried in parallel after 300 ms (happy eyeballs), so an
//! IPv6 address that drops packets does not hide a working IPv4 one.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::dns::GaiResolver;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// When the other address family is tried beside the first (RFC 6555 suggests 150-250 ms;
/// tonic and hyper-util use 300).
const HAPPY_EYEBALLS: Duration = Duration::from_millis(300);

/// Connects to the channel's URI as tonic's own connector does (no proxy, TCP_NODELAY on,
/// happy eyeballs), and acknowledges what the collector sends at once.
#[derive(Clone, Debug)]
pub(super) struct QuickAckConnector<R = GaiResolver> {
    http: HttpConnector<R>,
}

impl QuickAckConnector {
    /// With the system's resolver; `timeout` is shared among the addresses a name has.
    pub(super) fn new(timeout: Duration) -> Self {
        Self::with_resolver(GaiResolver::new(), timeout)
    }
}

impl<R> QuickAckConnector<R> {
    pub(super) fn with_resolver(resolver: R, timeout: Duration) -> Self {
        let mut http = HttpConnector::new_with_resolver(resolver);
        // TLS is layered on top by tonic; the scheme may be https.
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(timeout));
        http.set_happy_eyeballs_timeout(Some(HAPPY_EYEBALLS));
        QuickAckConnector { http }
    }
}

impl<R> tower_service::Service<Uri> for QuickAckConnector<R>
where
    HttpConnector<R>: tower_service::Service<Uri, Response = TokioIo<TcpStream>>,
    <HttpConnector<R> as tower_service::Service<Uri>>::Error: Into<BoxError>,
    <HttpConnector<R> as tower_service::Service<Uri>>::Future: Send + 'static,
{
    type Response = TokioIo<QuickAck>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.http.call(uri);
        Box::pin(async move {
            let stream = QuickAck(connecting.await.map_err(Into::into)?.into_inner());
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use hyper_util::client::legacy::connect::dns::Name;
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

    /// A resolver that answers with fixed addresses, in order.
    #[derive(Clone)]
    struct Fixed(Vec<SocketAddr>);

    impl tower_service::Service<Name> for Fixed {
        type Response = std::vec::IntoIter<SocketAddr>;
        type Error = io::Error;
        type Future = std::future::Ready<io::Result<Self::Response>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _name: Name) -> Self::Future {
            std::future::ready(Ok(self.0.clone().into_iter()))
        }
    }

    /// The first address a name resolves to drops every SYN (an IPv6 route that goes
    /// nowhere); the second is the collector. Connecting to each address in turn under one
    /// timeout, as this connector used to, spent the whole timeout on the first and failed;
    /// now the IPv4 address is tried 300 ms in and wins.
    #[tokio::test]
    async fn an_address_that_drops_packets_does_not_hide_the_next() {
        let live = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let port = live.local_addr().unwrap().port();
        // A listener whose accept queue is full drops further SYNs: a silent address that
        // stays on this machine.
        let silent = match tokio::net::TcpSocket::new_v6().and_then(|s| {
            s.bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port)))?;
            s.listen(0)
        }) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("SKIPPED: no IPv6 loopback here ({e})");
                return;
            }
        };
        let _fills_the_queue = std::net::TcpStream::connect((Ipv6Addr::LOCALHOST, port)).unwrap();
        let resolver = Fixed(vec![
            (Ipv6Addr::LOCALHOST, port).into(),
            (Ipv4Addr::LOCALHOST, port).into(),
        ]);
        let mut connector = QuickAckConnector::with_resolver(resolver, Duration::from_secs(5));
        let uri: Uri = format!("http://collector.example:{port}").parse().unwrap();
        // Well before the 2.5 s each address gets of the timeout: the other family was tried
        // beside the first.
        let connected = tokio::time::timeout(Duration::from_secs(2), async {
            std::future::poll_fn(|cx| tower_service::Service::poll_ready(&mut connector, cx))
                .await
                .unwrap();
            tower_service::Service::call(&mut connector, uri).await
        })
        .await
        .expect("the IPv4 address was tried beside the silent IPv6 one")
        .unwrap();
        let peer = connected.inner().0.peer_addr().unwrap();
        assert_eq!(peer, SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
        let (_, from) = live.accept().await.unwrap();
        assert_eq!(from, connected.inner().0.local_addr().unwrap());
        drop(silent);
    }
}
