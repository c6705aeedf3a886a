// Package upstream holds streamshift's control-plane calls to the upstream
// cluster: FindCoordinatorNode (which broker coordinates a group) and, in
// package upstream/anchor, the anchor members of proxy-owned groups.
package upstream
