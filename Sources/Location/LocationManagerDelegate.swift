/// What a ``LocationManager`` tells its owner, as `CLLocationManagerDelegate`. Called on the
/// manager's delegate queue (or, without one, on the source's thread), one call at a time.
public protocol LocationManagerDelegate: AnyObject, Sendable {
    /// New fixes, oldest first (standard updates, or a significant change).
    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])
    func locationManager(_ manager: LocationManager, didFailWithError error: LocationError)
    func locationManager(_ manager: LocationManager, didEnterRegion region: CircularRegion)
    func locationManager(_ manager: LocationManager, didExitRegion region: CircularRegion)
}

extension LocationManagerDelegate {
    public func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {}
    public func locationManager(_ manager: LocationManager, didEnterRegion region: CircularRegion) {}
    public func locationManager(_ manager: LocationManager, didExitRegion region: CircularRegion) {}
}
