// Package hotdeploy deploys the bundles of a deploy directory into a
// running engine (and, through its Tasks interface, WSO2 BPS task
// packages: folders of task definitions without deploy.xml, taskpkg.go)
// and keeps their versions: ODE's deploy-directory
// semantics (a poller that deploys a bundle folder once it is stable,
// markers, redeploy on change, undeploy on removal), the version counter
// and the archive of persistent versions in the data directory, and the
// deployer's side of the management API (uploads of zipped bundles,
// undeploys, activating and retiring versions, the bundle listing).
//
// It owns the files it writes in the deploy directory (markers, upload
// folders) and the versions folder of the data directory. It calls the
// engine (internal/process) and a Front (the SOAP front door, by its
// interface); it must not import internal/soap, internal/admin, the
// cluster packages, the management backend or its client
// (internal/importrules checks it).
package hotdeploy
