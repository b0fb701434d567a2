/**
 * What quorumlock's backends share, for them only: the acquire loop, the lease core, the clock, the
 * settings checks, the listener's events, holder names and secret redaction. Not an API for
 * applications: its types are public because the backends live in other modules, and they may
 * change in any release.
 */
package io.quorumlock.internal;
