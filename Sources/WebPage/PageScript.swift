/// The page's script, served as one file (`/app.js`) and kept here in parts by concern.
enum PageScript {
    static let whole = sync + view + planning + actions
}
