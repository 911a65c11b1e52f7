/// The Lua scripts that move jobs between Redis structures: each move is one of these, atomic,
/// one file each, named after what it does. `PipelineStore` is the only caller.
public enum PipelineScripts {}
