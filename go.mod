module github.com/orchd/orchd

go 1.26.8

require (
	github.com/antchfx/xpath v1.3.9 // indirect
	github.com/beevik/etree v1.8.1 // indirect
	github.com/hooklift/gowsdl v0.5.0 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	go.etcd.io/bbolt v1.4.3 // indirect
	golang.org/x/sys v0.35.0 // indirect
)
