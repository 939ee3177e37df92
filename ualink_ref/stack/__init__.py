"""The stack assembled: endpoints (TL + DL + PHY), the network harness that drives
them in time, link simulation and the test-helper pairs built on the harness."""
