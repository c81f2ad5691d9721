package valkeyserver

// SharedBinDir exposes sharedBinDir to the tests.
var SharedBinDir = sharedBinDir
