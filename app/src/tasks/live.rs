//! The browser's side of live routes: the events stream (`GET /api/events`) and
//! a clock that counts to the server's deadlines. On the server, and before
//! hydration, neither does anything: the page renders as it was read.

use api::{RouteView, Timestamp};
use leptos::prelude::*;

/// What the events stream tells a page.
#[derive(Debug, Clone)]
pub enum Live {
    /// A committed transition.
    Route(Box<RouteView>),
    /// Events were missed and cannot be replayed (or the stream reconnected):
    /// read everything again.
    Resync,
}

/// Whether the page is receiving live events; `false` until the stream opens.
#[derive(Debug, Clone, Copy)]
pub struct Connection(pub ReadSignal<bool>);

/// Call `on` with every live event for as long as the calling component lives.
/// The browser's `EventSource` reconnects by itself, sending `Last-Event-ID`, so
/// the server replays what was missed or says to resync; each time the stream
/// opens the page also resyncs once: the first time because the page's data was
/// read before the subscription began, later because a page cannot know what a
/// restarted server still holds.
pub fn use_route_events(on: impl Fn(Live) + Clone + 'static) -> Connection {
    let (connected, set_connected) = signal(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| subscribe(on.clone(), set_connected));
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (on, set_connected);
    }
    Connection(connected)
}

/// How long a page that reads its data again on route events waits after one:
/// a burst of transitions is read once.
#[cfg(feature = "hydrate")]
const REREAD_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// Subscribe the page to route events and call `reread` after each burst of them
/// (at most once every half second): for a page of many routes (the home page,
/// the circuits page) that reads its data again rather than applying each event.
pub fn use_reread_on_route_events(reread: impl Fn() + Copy + 'static) -> Connection {
    let pending = StoredValue::new(false);
    use_route_events(move |_: Live| {
        if pending.get_value() {
            return;
        }
        pending.set_value(true);
        #[cfg(feature = "hydrate")]
        set_timeout(
            move || {
                pending.set_value(false);
                reread();
            },
            REREAD_AFTER,
        );
        #[cfg(not(feature = "hydrate"))]
        let _ = reread;
    })
}

/// How long to wait before opening the stream again once the browser has given
/// up on it (the server answered with an error rather than dropping).
#[cfg(feature = "hydrate")]
const REOPEN_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

/// An open stream and the handlers it calls: they live exactly as long as it.
#[cfg(feature = "hydrate")]
struct Subscription {
    source: web_sys::EventSource,
    _messages: [wasm_bindgen::closure::Closure<dyn Fn(web_sys::MessageEvent)>; 2],
    _status: [wasm_bindgen::closure::Closure<dyn Fn(web_sys::Event)>; 2],
}

#[cfg(feature = "hydrate")]
type Slot = std::rc::Rc<std::cell::RefCell<Option<Subscription>>>;

#[cfg(feature = "hydrate")]
fn subscribe(on: impl Fn(Live) + Clone + 'static, set_connected: WriteSignal<bool>) {
    let slot: Slot = std::rc::Rc::default();
    let alive = std::rc::Rc::new(std::cell::Cell::new(true));
    open(on, set_connected, slot.clone(), alive.clone());
    // Closed with the page, whichever stream is open then.
    let kept = send_wrapper::SendWrapper::new((slot, alive));
    on_cleanup(move || {
        kept.1.set(false);
        if let Some(subscription) = kept.0.borrow_mut().take() {
            subscription.source.close();
        }
    });
}

/// Open the stream into `slot`, unless the page is gone.
#[cfg(feature = "hydrate")]
fn open(
    on: impl Fn(Live) + Clone + 'static,
    set_connected: WriteSignal<bool>,
    slot: Slot,
    alive: std::rc::Rc<std::cell::Cell<bool>>,
) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    if !alive.get() {
        return;
    }
    let Ok(source) = web_sys::EventSource::new("/api/events") else {
        return;
    };
    let on_route = {
        let on = on.clone();
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let Some(data) = event.data().as_string() else {
                return;
            };
            if let Ok(route) = serde_json::from_str::<RouteView>(&data) {
                on(Live::Route(Box::new(route)));
            }
        })
    };
    let on_resync = {
        let on = on.clone();
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |_: web_sys::MessageEvent| {
            on(Live::Resync);
        })
    };
    // Every opening resyncs: the first closes the gap between reading the page's
    // data and subscribing, a later one whatever a restarted server cannot replay.
    let on_open = {
        let on = on.clone();
        Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
            set_connected.set(true);
            on(Live::Resync);
        })
    };
    // A dropped connection the browser retries by itself; a refused one (an error
    // status from the server or a proxy) it gives up on, so open it again later.
    let on_error = {
        let (source, slot, alive) = (source.clone(), slot.clone(), alive.clone());
        Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
            set_connected.set(false);
            if source.ready_state() == web_sys::EventSource::CLOSED {
                let (on, slot, alive) = (on.clone(), slot.clone(), alive.clone());
                set_timeout(move || open(on, set_connected, slot, alive), REOPEN_AFTER);
            }
        })
    };
    let _ = source.add_event_listener_with_callback("route", on_route.as_ref().unchecked_ref());
    let _ = source.add_event_listener_with_callback("resync", on_resync.as_ref().unchecked_ref());
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let replaced = slot.borrow_mut().replace(Subscription {
        source,
        _messages: [on_route, on_resync],
        _status: [on_open, on_error],
    });
    if let Some(old) = replaced {
        old.source.close();
    }
}

/// The server's time now, ticking every second in the browser: the server's
/// clock at its latest reading, plus the time elapsed here since then. A
/// countdown so counts to the server's deadline, whatever this machine's clock
/// says; each fresh read of the page's data re-anchors it (the first reading
/// is as old as the page load).
#[derive(Debug, Clone, Copy)]
pub struct ServerClock {
    /// The server's time now.
    pub now: Signal<Timestamp>,
    /// The server's time at its latest reading, and this machine's clock then
    /// (milliseconds; not a number until the browser starts counting).
    reading: RwSignal<(Timestamp, f64)>,
}

impl ServerClock {
    /// Count from `read_at`, read just now.
    pub fn anchor(&self, read_at: Timestamp) {
        self.reading.set((read_at, local_now()));
    }
}

/// This machine's clock, in milliseconds (not a number on the server).
fn local_now() -> f64 {
    #[cfg(feature = "hydrate")]
    return web_sys::js_sys::Date::now();
    #[cfg(not(feature = "hydrate"))]
    f64::NAN
}

/// A clock that starts at `read_at` (the server's time when the page's data was
/// read) and ticks every second once hydrated.
pub fn use_server_clock(read_at: Timestamp) -> ServerClock {
    let reading = RwSignal::new((read_at, f64::NAN));
    let (tick, set_tick) = signal(0_u64);
    let now = Signal::derive(move || {
        tick.track();
        let (at, local) = reading.get();
        if local.is_nan() {
            at
        } else {
            #[allow(clippy::cast_possible_truncation)]
            at.plus_millis((local_now() - local) as i64)
        }
    });
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        reading.update(|(_, local)| {
            if local.is_nan() {
                *local = local_now();
            }
        });
        if let Ok(handle) = set_interval_with_handle(
            move || set_tick.update(|tick| *tick += 1),
            std::time::Duration::from_secs(1),
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = set_tick;
    ServerClock { now, reading }
}
