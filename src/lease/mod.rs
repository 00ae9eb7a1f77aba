//! Non-retransmission leases: run scopes, coordinator, gate, filtering provider.
