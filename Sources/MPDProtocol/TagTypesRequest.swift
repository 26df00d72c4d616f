/// The forms of the `tagtypes` command, which sets which tags this client's song blocks carry.
public enum TagTypesRequest: Hashable, Sendable {
    /// `tagtypes`: list the enabled tag types (`tagtype: Artist` ...).
    case list
    /// `tagtypes clear`: disable every tag.
    case clear
    /// `tagtypes all`: enable every tag.
    case all
    /// `tagtypes enable NAME...`: enable some tags.
    case enable(Set<TagType>)
    /// `tagtypes disable NAME...`: disable some tags.
    case disable(Set<TagType>)
}
