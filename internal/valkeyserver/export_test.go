package valkeyserver

// SharedBinDir exposes sharedBinDir to the tests.
var SharedBinDir = sharedBinDir

// HasFlag exposes hasFlag to the tests.
var HasFlag = hasFlag
