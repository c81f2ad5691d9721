// Package gamestore keeps Codemojex games in Valkey, one per chat, so that
// any bot process can handle any update, and keeps each chat's leaderboard.
//
// # Keys
//
// All keys live under the program's hash tag T, in the game store's
// segment "g", so they share one cluster slot (the lanes') and one Lua
// script may touch them all. They are built in keys.go only (docs/keys.md
// lists every key of the program):
//
//	{T}:g:game:<chat_id>   hash: id (game ID), rev (version number), state (game.State JSON)
//	{T}:g:top:<chat_id>    sorted set: user_id -> total points
//	{T}:g:names:<chat_id>  hash: user_id -> display name (set on a win)
//
// A running game's key expires after the game TTL (default 7 days) without a
// move; a finished game (won, lost, given up) is deleted at once, so the
// keyspace does not grow with played games. The leaderboard and names have
// no TTL: they are the chat's lasting record.
//
// # Concurrency
//
// Every change is an optimistic read-modify-write: read the game and its
// rev, apply the pure game transition in Go, then write with cas.lua, which
// compares the game ID and rev and writes the new state, or deletes it and
// credits the winner's points, in one atomic step. On a conflict (another
// process moved first) the transition is retried on fresh state, up to a
// bounded number of tries (default 16, with a short jittered back-off), and
// then ErrConflict is returned. So two simultaneous guesses never lose an
// update, and a code is won, and its points credited, once.
package gamestore
