//! What the scripted model APIs share: a router served on a port the system picks, on a
//! runtime of its own that stops when the server is dropped.

use std::net::SocketAddr;

pub struct MockServer {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl MockServer {
    pub fn start(app: axum::Router) -> MockServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let addr = runtime.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(l, app).await });
            addr
        });
        MockServer {
            addr,
            runtime: Some(runtime),
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            // The CLI under test may still hold a connection open; nothing waits on it.
            rt.shutdown_background();
        }
    }
}
