//! uninstall: it refuses while a route goes to this unit's server (or removes and verifies that route
//! first with `--with-route`), leaves a route to another unit's server alone, prints the two commands in
//! order without root, `--purge` removes only a state dir, and the wrong variant is pointed at the other.

use super::*;

#[test]
fn uninstall_refuses_while_a_route_is_installed_unless_with_route() {
    let mut fx = Fixture::new(Os::Linux);
    fx.route.states = VecDeque::from([RouteState::Installed {
        what: "adapter dns-delegate".into(),
        server: None,
    }]);
    let a = fx.uninstall_args();
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(e.next.contains("--with-route"));
    assert_eq!(fx.calls(), ["route status"]);
}

#[test]
fn with_route_removes_and_verifies_the_route_before_stopping_the_server() {
    let mut fx = Fixture::new(Os::Linux);
    fx.is_root = true;
    fx.make_state_dir();
    let unit = fx.home().join(".config/systemd/user/pigsty-dns.service");
    std::fs::create_dir_all(unit.parent().unwrap()).unwrap();
    std::fs::write(&unit, "x").unwrap();
    fx.route.states = VecDeque::from([
        RouteState::Installed {
            what: "adapter dns-delegate".into(),
            server: None,
        },
        RouteState::NotInstalled,
    ]);
    let mut a = fx.uninstall_args();
    a.with_route = true;
    let out = fx.with(|h| uninstall(h, &a, false)).unwrap();
    assert_eq!(
        fx.calls(),
        [
            "route status",
            "route uninstall",
            "route status",
            "run systemctl --user disable --now pigsty-dns.service",
            "run systemctl --user daemon-reload",
            "run systemctl --user reset-failed pigsty-dns.service",
        ]
    );
    assert!(!unit.exists());
    assert!(fx.state().exists(), "records kept without --purge");
    assert!(out.contains("kept the records"), "{out}");
}

#[test]
fn a_route_that_stays_stops_the_uninstall_before_the_server() {
    let mut fx = Fixture::new(Os::Linux);
    fx.is_root = true;
    let unit = fx.home().join(".config/systemd/user/pigsty-dns.service");
    std::fs::create_dir_all(unit.parent().unwrap()).unwrap();
    std::fs::write(&unit, "x").unwrap();
    fx.route.states = VecDeque::from([RouteState::Installed {
        what: "x".into(),
        server: None,
    }]);
    let mut a = fx.uninstall_args();
    a.with_route = true;
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Partial);
    assert!(
        !fx.calls().iter().any(|c| c.contains("systemctl")),
        "{:?}",
        fx.calls()
    );
    assert!(unit.exists());
    // A failing route uninstall: same, nothing stopped.
    fx.route.uninstall_ok = false;
    fx.log.borrow_mut().clear();
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Partial);
    assert_eq!(fx.calls(), ["route status", "route uninstall"]);
}

#[test]
fn without_root_the_two_commands_are_printed_in_order_and_nothing_runs() {
    let mut fx = Fixture::new(Os::Linux);
    fx.route.states = VecDeque::from([RouteState::Installed {
        what: "x".into(),
        server: None,
    }]);
    let mut a = fx.uninstall_args();
    a.with_route = true;
    a.purge = true;
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Capability);
    assert_ne!(e.class.exit_code(), 0);
    let r = e.report.unwrap();
    let first = r.find("1. sudo ").unwrap();
    let second = r.find("2. ").unwrap();
    assert!(first < second, "{r}");
    assert!(r[first..second].contains("route uninstall --yes"), "{r}");
    assert!(
        r[second..].contains("service uninstall") && r[second..].contains("--purge"),
        "{r}"
    );
    assert_eq!(fx.calls(), ["route status"]);
    // Under sudo a user unit is not root's to stop: split the same way.
    fx.is_root = true;
    fx.sudo_user = Some("alice".into());
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Capability);
    assert!(
        e.report.unwrap().contains("2. /"),
        "the second command runs without sudo"
    );
    // The dry run shows the order too.
    a.dry_run = true;
    let out = fx.with(|h| uninstall(h, &a, false)).unwrap();
    let (ru, rv) = (
        out.find("route uninstall").unwrap(),
        out.find("route status shows").unwrap(),
    );
    assert!(ru < rv, "{out}");
}

#[test]
fn purge_removes_only_a_state_dir() {
    let mut fx = Fixture::new(Os::Linux);
    fx.make_state_dir();
    let mut a = fx.uninstall_args();
    a.purge = true;
    let out = fx.with(|h| uninstall(h, &a, false)).unwrap();
    assert!(!fx.state().exists(), "{out}");
    assert!(out.contains("no unit at"), "{out}");
    // Not a state dir: refused, kept.
    std::fs::create_dir_all(fx.state().join("photos")).unwrap();
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(fx.state().join("photos").exists());
}

#[test]
fn uninstall_points_at_the_other_variant() {
    let mut fx = Fixture::new(Os::Linux);
    let sys = fx.root().join("etc/systemd/system/pigsty-dns.service");
    std::fs::create_dir_all(sys.parent().unwrap()).unwrap();
    std::fs::write(&sys, "x").unwrap();
    let a = fx.uninstall_args();
    let out = fx.with(|h| uninstall(h, &a, false)).unwrap();
    assert!(out.contains("add --system"), "{out}");
}

#[test]
fn a_route_to_another_units_server_is_left_alone_and_one_to_this_unit_is_not() {
    let mut fx = Fixture::new(Os::Linux);
    fx.is_root = true;
    let unit = fx.home().join(".config/systemd/user/pigsty-dns.service");
    std::fs::create_dir_all(unit.parent().unwrap()).unwrap();
    std::fs::write(
        &unit,
        "[Service]\nExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:5398\n",
    )
    .unwrap();
    let route_to = |server: &str| RouteState::Installed {
        what: "adapter resolved-link".into(),
        server: Some(server.into()),
    };
    // The system unit's route (to 5399): this user unit's uninstall neither refuses nor removes it.
    fx.route.states = VecDeque::from([route_to("127.0.0.1:5399")]);
    let mut a = fx.uninstall_args();
    // prerm's question, by a field of the dry run's JSON.
    a.dry_run = true;
    let dry: serde_json::Value =
        serde_json::from_str(&fx.with(|h| uninstall(h, &a, true)).unwrap()).unwrap();
    assert_eq!(dry["route_elsewhere"], true, "{dry}");
    a.dry_run = false;
    let out = fx.with(|h| uninstall(h, &a, false)).unwrap();
    assert!(
        out.contains("goes to 127.0.0.1:5399, not to this unit: left in place"),
        "{out}"
    );
    assert_eq!(fx.calls()[0], "route status");
    assert!(
        !fx.calls().iter().any(|c| c == "route uninstall"),
        "{:?}",
        fx.calls()
    );
    assert!(!unit.exists());
    // A route to this unit's own address: refused without --with-route, as before.
    std::fs::write(
        &unit,
        "[Service]\nExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:5398\n",
    )
    .unwrap();
    fx.log.borrow_mut().clear();
    fx.route.states = VecDeque::from([route_to("127.0.0.1:5398")]);
    let e = fx.with(|h| uninstall(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(unit.exists());
}
